"""Short wording shared by the checks' verdicts."""

from __future__ import annotations

from collections.abc import Iterable

EXAMPLES = 3  # examples a failing verdict quotes
LONGEST = 60  # characters of one quoted value


def count(n: int, noun: str, plural: str | None = None) -> str:
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


def clip(text: str | None, limit: int = LONGEST) -> str:
    text = "null" if text is None else text
    return text if len(text) <= limit else text[: limit - 1] + "…"


def listing(items: Iterable[str]) -> str:
    return "; ".join(items)


def tasks(load: dict[int, int]) -> str:
    """'task 2: 51, task 3: 49'."""
    return ", ".join(f"task {t}: {n:,}" for t, n in sorted(load.items())) or "no tuples"
