"""Which subscription a traced tuple belongs to, and the lookups the checks need, as
lookups in small literal tables rather than joins with tables made on the driver: a
topology has a handful of subscriptions and tasks, and on Spark each such join costs a
job of its own."""

from __future__ import annotations

import json
from collections.abc import Sequence

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from ..trace import schema
from .topology import Subscription
from .traces import Traces, inputs

SEP = "\x1f"  # joins the parts of a lookup key


def received(records: DataFrame, subs: Sequence[Subscription]) -> DataFrame:
    """Bolt input tuples with `sub`: one row per subscription the tuple came through."""
    table: dict[str, list[int]] = {}
    for s in subs:
        table.setdefault(SEP.join((s.target, s.source, s.stream)), []).append(s.number)
    at = F.concat_ws(SEP, "component", "src", "stream")
    return inputs(records).select("*", F.explode(_lookup(table, at, "array<int>")).alias("sub"))


def emitted(records: DataFrame, subs: Sequence[Subscription]) -> DataFrame:
    """Emits with `sub` (one row per subscriber of the stream) and `src_task`, the
    emitting task, as a receiver's record names it."""
    table: dict[str, list[int]] = {}
    for s in subs:
        table.setdefault(SEP.join((s.source, s.stream)), []).append(s.number)
    at = F.concat_ws(SEP, "component", "stream")
    return (records.filter(F.col("ev") == schema.EMIT)
            .select(*[c for c in records.columns if c not in ("task", "src_task")],
                    F.col("task").alias("src_task"),
                    F.explode(_lookup(table, at, "array<int>")).alias("sub")))


def key(subs: Sequence[Subscription]) -> Column:
    """The values of a tuple's grouping fields as JSON text, per its `sub`."""
    positions = _lookup({str(s.number): list(s.key_index) for s in subs},
                        F.col("sub").cast("string"), "array<int>")
    parsed = F.from_json(F.col("values"), "array<variant>")
    return F.to_json(F.transform(positions, lambda i: F.get(parsed, i)))


def index(traces: Traces, task: str = "task", component: str = "component") -> Column:
    """A task's place among its component's sorted tasks on its system; null if the task
    is not one of the component's."""
    table = {SEP.join((system, comp, str(t))): i for system, comps in traces.tasks.items()
             for comp, ids in comps.items() for i, t in enumerate(ids)}
    return _lookup(table, F.concat_ws(SEP, "system", component, F.col(task).cast("string")),
                   "int")


def tasks_of(traces: Traces, component: str) -> Column:
    """The sorted tasks of the component named by column `component`, on each system."""
    table = {SEP.join((system, comp)): ids for system, comps in traces.tasks.items()
             for comp, ids in comps.items()}
    found = _lookup(table, F.concat_ws(SEP, "system", component), "array<bigint>")
    return F.coalesce(found, F.array().cast("array<bigint>"))


def target_of(subs: Sequence[Subscription]) -> Column:
    return _lookup({str(s.number): s.target for s in subs}, F.col("sub").cast("string"),
                   "string")


def _lookup(table: dict[str, object], at: Column, kind: str) -> Column:
    """`table[at]`, null when absent. The table travels as one JSON literal, which Spark
    parses once (a constant), where a map of literals would cost a call per entry."""
    mapping = F.from_json(F.lit(json.dumps(table)), f"map<string,{kind}>")
    return F.try_element_at(mapping, at)
