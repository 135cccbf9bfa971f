"""Assertions on what a component emitted, with a diff a person can read: the tuples
missing and the tuples not expected (with counts), or, for an ordered comparison, a
line-by-line diff."""

from __future__ import annotations

import difflib
import json
from collections import Counter
from typing import Any

SHOWN = 20  # tuples listed per side of a diff


def _text(values: Any) -> str:
    try:
        return json.dumps(values, sort_keys=True, default=repr)
    except (TypeError, ValueError):
        return repr(values)


def emitted_diff(expected: list[Any], actual: list[Any], ordered: bool = False) -> str:
    """'' when `actual` matches `expected` (as multisets, or as sequences when
    `ordered`), else what differs."""
    want, got = [_text(v) for v in expected], [_text(v) for v in actual]
    if ordered:
        if want == got:
            return ""
        lines = list(difflib.unified_diff(want, got, "expected", "emitted", lineterm="", n=2))
        return "\n".join(lines[:3 + 2 * SHOWN])
    missing, extra = Counter(want) - Counter(got), Counter(got) - Counter(want)
    if not missing and not extra:
        return ""
    out = [f"expected {len(want)} tuples, emitted {len(got)}"]
    for title, part in (("missing (expected, not emitted)", missing),
                        ("unexpected (emitted, not expected)", extra)):
        if part:
            out.append(f"{title}:")
            items = sorted(part.items())
            out += [f"  - {text}" + (f"  x{n}" if n > 1 else "") for text, n in items[:SHOWN]]
            if len(items) > SHOWN:
                out.append(f"  ... and {len(items) - SHOWN} more")
    return "\n".join(out)


def assert_emitted(result: Any, component: str, expected: list[Any], stream: str = "default",
                   ordered: bool = False) -> None:
    """Assert that `component` emitted exactly `expected` on `stream` (in any order unless
    `ordered`). `result`: a Result (complete_topology) or an Isolated component."""
    __tracebackhide__ = True  # pytest shows the test's line and this message, not our frame
    if hasattr(result, "record") and callable(result.record):  # a Result
        actual = result.emitted(component, stream)
        where = f"topology {result.topology!r} ({result.system})"
    else:  # an Isolated component
        if component != result.component:
            msg = f"expected the isolated component {result.component!r}, received {component!r}"
            raise AssertionError(msg)
        actual = result.emitted(stream)
        where = f"topology {result.plan.name!r} (isolated)"
    diff = emitted_diff([list(v) if isinstance(v, tuple) else v for v in expected], actual,
                        ordered)
    if diff:
        msg = f"{where}, component {component!r}, stream {stream!r}:\n{diff}"
        raise AssertionError(msg)
