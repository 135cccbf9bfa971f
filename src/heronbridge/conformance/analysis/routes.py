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


def key(subs: Sequence[Subscription], streams: dict[str, dict[str, tuple[str, ...]]]
        | None = None) -> Column:
    """The values of a tuple's grouping fields as JSON text, per its `sub`. Parsed out of
    the values only where they are some of the stream's fields: where they are all of
    them in order, the key is the values' text, and where there are none, "[]"."""
    positions = _lookup({str(s.number): list(s.key_index) for s in subs},
                        F.col("sub").cast("string"), "array<int>")
    parsed = F.from_json(F.col("values"), "array<variant>")
    found = F.to_json(F.transform(positions, lambda i: F.get(parsed, i)))
    for s in subs:
        fields = (streams or {}).get(s.source, {}).get(s.stream)
        if not s.key_index:
            found = F.when(F.col("sub") == s.number, F.lit("[]")).otherwise(found)
        elif fields is not None and s.key_index == tuple(range(len(fields))):
            found = F.when(F.col("sub") == s.number, F.col("values")).otherwise(found)
    return found


def index(traces: Traces, task: str = "task", component: str = "component") -> Column:
    """A task's place among its component's sorted tasks on its system; null if the task
    is not one of the component's. Looked up by task id (a number) on each system: no
    text is built per row."""
    found = F.lit(None).cast("int")
    for system, comps in traces.tasks.items():
        places = {t: (comp, i) for comp, ids in comps.items() for i, t in enumerate(ids)}
        if not places:
            continue
        at = F.col(task)
        place = F.create_map(*[x for t, (_, i) in places.items() for x in (F.lit(t), F.lit(i))])
        owner = F.create_map(*[x for t, (c, _) in places.items() for x in (F.lit(t), F.lit(c))])
        mine = F.when(F.try_element_at(owner, at) == F.col(component),
                      F.try_element_at(place, at))
        found = F.when(F.col("system") == system, mine).otherwise(found)
    return found


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
