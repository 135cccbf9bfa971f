"""A plan read on a host whose copy of the topology's files is elsewhere than the
submitter's.

A plan names folders of the host that submitted it (its Python path, a project's src/
copy in a component's config). A scheduler that ships those folders to other hosts (the
Spark scheduler's package) starts each container with $HERONBRIDGE_RELOCATE, a JSON list
of [submitter's folder, this host's copy] pairs; every process of the container then reads
the plan with those folders replaced, so it imports and opens the shipped copies.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from typing import Any

from ..errors import PlanError
from .logical import LogicalPlan

RELOCATE_ENV = "HERONBRIDGE_RELOCATE"


@lru_cache(maxsize=4)
def _pairs(text: str) -> tuple[tuple[str, str], ...]:
    try:
        pairs = [(str(a), str(b)) for a, b in json.loads(text)]
    except (ValueError, TypeError) as exc:
        msg = f"${RELOCATE_ENV}: expected a JSON list of [from, to] folders, received {text!r}"
        raise PlanError(msg) from exc
    # The deepest folder first: a folder inside another keeps its own copy.
    return tuple(sorted(pairs, key=lambda p: -len(p[0])))


def relocations() -> tuple[tuple[str, str], ...]:
    """This process's [from, to] folder pairs ($HERONBRIDGE_RELOCATE), deepest first."""
    text = os.environ.get(RELOCATE_ENV)
    return _pairs(text) if text else ()


def relocate_path(value: str, pairs: tuple[tuple[str, str], ...]) -> str:
    for old, new in pairs:
        if value == old or value.startswith(old.rstrip("/") + "/"):
            return new + value[len(old.rstrip("/")):]
    return value


def _relocate(value: Any, pairs: tuple[tuple[str, str], ...]) -> Any:
    if isinstance(value, str):
        return relocate_path(value, pairs)
    if isinstance(value, list):
        return [_relocate(v, pairs) for v in value]
    if isinstance(value, dict):
        return {k: _relocate(v, pairs) for k, v in value.items()}
    return value


def relocated(plan: LogicalPlan) -> LogicalPlan:
    """The plan with this process's relocations applied to its Python path and to every
    config value naming a relocated folder (or a file in one); the plan itself when there
    are none."""
    pairs = relocations()
    if not pairs:
        return plan
    plan.python_path = [relocate_path(p, pairs) for p in plan.python_path]
    plan.config = _relocate(plan.config, pairs)
    for spec in plan.components.values():
        spec.config = _relocate(spec.config, pairs)
    return plan
