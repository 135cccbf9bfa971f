"""Routing one emit to destination tasks, with Storm's semantics per grouping.

A router is built once per (emitting task, output stream, subscriber) and maps a values
list to a `Target`: the destination tasks and their output buffers. Targets are cached
wherever the choice can only take a few shapes, so the per-tuple path allocates nothing.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Sequence
from typing import Any

from ..errors import PlanError, where
from ..plan.java import is_java_grouping
from ..plan.logical import (
    ALL,
    CUSTOM,
    DIRECT,
    FIELDS,
    GLOBAL,
    LOCAL_OR_SHUFFLE,
    NONE,
    PARTIAL_KEY,
    SHUFFLE,
    Grouping,
    resolve_import_path,
)
from .javahash import PartialKeyChooser, fields_index


class OutBuffer:
    """Tuples waiting to go to one destination task on one stream, as wire records:
    (values,) untracked, or (values, root, edge)."""

    __slots__ = ("records", "stream", "task")

    def __init__(self, stream: int, task: int) -> None:
        self.stream = stream
        self.task = task
        self.records: list[tuple] = []


class Target:
    """Where one emit goes: `tasks` (returned to the user) and their `buffers`;
    `single` is the buffer when there is exactly one (the common case)."""

    __slots__ = ("buffers", "single", "tasks")

    def __init__(self, buffers: Sequence[OutBuffer]) -> None:
        self.buffers = tuple(buffers)
        self.tasks = tuple(b.task for b in self.buffers)
        self.single = self.buffers[0] if len(self.buffers) == 1 else None


NOWHERE = Target(())


def combine(targets: Sequence[Target]) -> Target:
    return Target([b for t in targets for b in t.buffers])


Router = Callable[[list], Target]


def make_router(grouping: Grouping, buffers: Sequence[OutBuffer], fields: Sequence[str],
                local_tasks: frozenset[int], rng: random.Random, context: Any = None,
                stream: str = "default", java: Callable[[list], Sequence[int]] | None = None,
                subscriber: str = "") -> Router | Target:
    """A function values -> Target for one subscriber, or the Target itself when every
    tuple goes to the same tasks; `buffers` are in ascending task order. `java`: the
    chooseTasks of a Java custom grouping (its JVM beside the task), for one that is."""
    singles = [Target([b]) for b in buffers]
    kind = grouping.kind
    if kind == ALL:
        return Target(buffers)
    if kind == GLOBAL or (len(singles) == 1 and kind not in (CUSTOM, DIRECT)):
        return singles[0]
    if kind in (SHUFFLE, LOCAL_OR_SHUFFLE):
        pool = singles
        if kind == LOCAL_OR_SHUFFLE:
            pool = [t for t in singles if t.tasks[0] in local_tasks] or singles
        return _shuffle(pool, rng)
    if kind == FIELDS:
        return _fields(singles, [fields.index(f) for f in grouping.fields])
    if kind == NONE:
        choice = rng.choice
        return lambda values: choice(singles)
    if kind == PARTIAL_KEY:
        return _partial_key(singles, [fields.index(f) for f in grouping.fields])
    if kind == CUSTOM and is_java_grouping(grouping.custom):
        return _java_custom(grouping.custom or "", java, singles, context, stream, subscriber)
    if kind == CUSTOM:
        return _custom(grouping.custom, singles, context, stream)
    if kind == DIRECT:
        # Direct subscribers receive only emits that name their task (see the collector).
        return lambda values: NOWHERE
    msg = f"{_where(context)}: unknown grouping {kind!r} on stream {stream!r}"
    raise PlanError(msg)


def _shuffle(pool: list[Target], rng: random.Random) -> Router:
    # Storm's ShuffleGrouping: one random permutation, then strict round robin.
    order = list(pool)
    rng.shuffle(order)
    cycle = itertools.cycle(order)
    return lambda values: next(cycle)


MEMO_LIMIT = 1 << 16


def _fields(singles: list[Target], idx: list[int]) -> Router:
    n = len(singles)
    if len(idx) > 1:
        return lambda values: singles[fields_index([values[j] for j in idx], n)]
    i = idx[0]
    # Keys repeat: remember the target of recent str keys. Only str: 1, 1.0 and True are
    # one dict key but three different Java hashes, and no str equals any of them.
    memo: dict = {}
    memo_get = memo.get

    def route(values: list) -> Target:
        key = values[i]
        target = memo_get(key)
        if target is not None:
            return target
        target = singles[fields_index((key,), n)]
        if key.__class__ is str:
            if len(memo) >= MEMO_LIMIT:
                memo.clear()
            memo[key] = target
        return target
    return route


def _partial_key(singles: list[Target], idx: list[int]) -> Router:
    if idx:
        chooser = PartialKeyChooser(len(singles))
        return lambda values: singles[chooser.choose([values[j] for j in idx])]
    # Without fields Storm keys on the first value's toString() bytes.
    chooser = PartialKeyChooser(len(singles), fields=False)
    return lambda values: singles[chooser.choose(values[0])]


def _custom(path: str | None, singles: list[Target], context: Any, stream: str) -> Router:
    try:
        grouping = resolve_import_path(path or "")
    except Exception as exc:
        msg = f"{_where(context)}: custom grouping {path!r} cannot be imported: {exc}"
        raise PlanError(msg) from exc
    by_task = {t.tasks[0]: t for t in singles}
    targets = sorted(by_task)
    if isinstance(grouping, type):
        grouping = grouping()
        if hasattr(grouping, "prepare"):
            grouping.prepare(context, stream, list(targets))
        choose = grouping.choose_tasks

        def call(values: list) -> Any:
            return choose(values)
    else:
        def call(values: list) -> Any:
            return grouping(values, targets)

    def route(values: list) -> Target:
        chosen = call(values)
        try:
            return combine([by_task[t] for t in chosen])
        except (KeyError, TypeError):
            msg = (f"{_where(context)}: custom grouping {path!r} on stream {stream!r} must "
                   f"return task ids among {targets}, returned {chosen!r}")
            raise PlanError(msg) from None
    return route


def _java_custom(spec: str, choose: Callable[[list], Sequence[int]] | None,
                 singles: list[Target], context: Any, stream: str, subscriber: str) -> Router:
    if choose is None:
        msg = (f"{_where(context)}: the Java custom grouping {spec} on stream {stream!r} to "
               f"{subscriber!r} runs in a JVM beside the task; expected its chooser, "
               "received none (the task starts it: instance/java_groupings.py)")
        raise PlanError(msg)
    by_task = {t.tasks[0]: t for t in singles}
    targets = sorted(by_task)

    def route(values: list) -> Target:
        chosen = choose(values)
        try:
            if len(chosen) == 1:
                return by_task[chosen[0]]
            return combine([by_task[t] for t in chosen])
        except (KeyError, TypeError):
            msg = (f"{_where(context)}: the Java custom grouping {spec} on stream "
                   f"{stream!r} to {subscriber!r} must choose task ids among {targets}, "
                   f"chose {chosen!r} for values {values!r}")
            raise PlanError(msg) from None
    return route


def _where(context: Any) -> str:
    """The emitting task, from its topology context (absent in some unit tests)."""
    return where(getattr(context, "topology_name", None), getattr(context, "component_id", None),
                 getattr(context, "task_id", None)) or "a router"
