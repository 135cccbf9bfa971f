"""Grouping: where each subscription's tuples went, on each system and across them.

- fields: every key (the grouping fields' values) reaches exactly one task of the
  subscriber, and the task with the same index within the component on both systems
  (task ids differ when one system numbers more system components);
- global: only the subscriber's lowest task receives;
- all: every task receives every tuple;
- direct: each tuple reaches the task its emit named, and only it, and the named task
  has the same index on both systems;
- shuffle and the rest: the load per task, for information.

When the runs were disturbed (faults, replays), `all` and `direct` forgive lost and
repeated tuples but never a tuple at a task it was not routed to.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pyspark.sql import Column, DataFrame, Row
from pyspark.sql import functions as F

from ..trace import schema
from . import routes, text
from .results import FAIL, INFO, NO_TRACES, PASS, Verdict
from .topology import KEYED, Subscription, Topology
from .traces import Traces

CHECK = "grouping"
CROSS = "both"  # the key of findings that compare the two systems
JUDGED = (*KEYED, "all", "direct")
S, R = schema.STORM, schema.RUNTIME


@dataclass
class _Finding:
    said: dict[str, str] = field(default_factory=dict)  # system -> what it did
    problems: dict[str, list[str]] = field(default_factory=dict)  # system or CROSS -> why

    def problem(self, who: str, why: str) -> None:
        self.problems.setdefault(who, []).append(why)


def check(traces: Traces, topology: Topology, *, exact: bool,
          unrepeatable: frozenset[str] = frozenset()) -> list[Verdict]:
    """`unrepeatable`: components whose input differs between the systems (see parity):
    what their direct emits named is not compared across the systems."""
    subs = topology.subscriptions
    findings = {s.number: _Finding() for s in subs}

    def of(*kinds: str) -> list[Subscription]:
        return [s for s in subs if s.grouping in kinds]

    if of(*KEYED):
        _keyed(traces, of(*KEYED), findings, topology)
    if of("all"):
        _all(traces, of("all"), findings, exact)
    if of("direct"):
        _direct(traces, of("direct"), findings, exact, unrepeatable)
    spread = [s for s in subs if s.grouping not in JUDGED]
    if spread:
        _load(traces, spread, findings)
    return [_verdict(traces, s, findings[s.number]) for s in subs]


def _verdict(traces: Traces, sub: Subscription, finding: _Finding) -> Verdict:
    said = {s: finding.said.get(s, "no tuples") if s in traces.systems else NO_TRACES
            for s in schema.SYSTEMS}
    if sub.grouping not in JUDGED:
        return Verdict(CHECK, sub.subject, said[S], said[R], INFO,
                       f"{sub.grouping} grouping: load per task")
    problems = [f"{who}: {why}" for who in (*schema.SYSTEMS, CROSS)
                for why in finding.problems.get(who, [])]
    if sub.grouping in ("fields", "direct"):
        problems += [f"no {s} traces: cannot compare task indexes"
                     for s in schema.SYSTEMS if s not in traces.systems]
    return Verdict(CHECK, sub.subject, said[S], said[R], FAIL if problems else PASS,
                   text.listing(problems))


def _examples(condition: Column, *fields: Column | str) -> Column:
    return F.slice(F.sort_array(F.collect_list(F.when(condition, F.struct(*fields)))),
                   1, text.EXAMPLES)


def _keyed(traces: Traces, subs: list[Subscription], findings: dict[int, _Finding],
           topology: Topology) -> None:
    per_system = []
    for s in schema.SYSTEMS:
        mine = F.col("system") == s
        per_system += [
            F.count_if(mine).alias(f"{s}_n"),
            F.sort_array(F.collect_set(F.when(mine, F.col("task")))).alias(f"{s}_tasks"),
            F.min(F.when(mine, F.col("index"))).alias(f"{s}_index"),
            F.count_if(mine & (F.coalesce(F.col("index"), F.lit(-1)) != 0)).alias(f"{s}_off")]
    per_key = (routes.received(traces.records, subs)
               .withColumn("key", routes.key(subs, topology.streams))
               .withColumn("index", routes.index(traces))
               .groupBy("sub", "key").agg(*per_system))
    own = []
    for s in schema.SYSTEMS:
        split = F.size(f"{s}_tasks") > 1
        own += [F.count_if(F.col(f"{s}_n") > 0).alias(f"{s}_keys"),
                F.sum(f"{s}_n").alias(f"{s}_tuples"), F.sum(f"{s}_off").alias(f"{s}_off"),
                F.count_if(split).alias(f"{s}_split"),
                F.array_sort(F.array_distinct(F.flatten(F.collect_list(f"{s}_tasks"))))
                .alias(f"{s}_all_tasks"),
                _examples(split, "key", F.col(f"{s}_tasks").alias("tasks"))
                .alias(f"{s}_examples")]
    single = (F.size(f"{S}_tasks") == 1) & (F.size(f"{R}_tasks") == 1)
    moved = single & (F.col(f"{S}_index") != F.col(f"{R}_index"))
    rows = per_key.groupBy("sub").agg(
        *own, F.count_if(single).alias("compared"), F.count_if(moved).alias("moved"),
        _examples(moved, "key", F.col(f"{S}_index").alias("s"),
                  F.get(f"{S}_tasks", 0).alias("s_task"), F.col(f"{R}_index").alias("r"),
                  F.get(f"{R}_tasks", 0).alias("r_task")).alias("moved_examples"),
    ).collect()
    by_number = {s.number: s for s in subs}
    for row in rows:
        sub = by_number[row["sub"]]
        finding = findings[sub.number]
        for system in traces.systems:
            if row[f"{system}_keys"]:
                _keyed_system(traces, sub, finding, system, row)
        if row["moved"] and sub.grouping == "fields":
            finding.problem(CROSS, (
                f"{row['moved']:,} of {text.count(row['compared'], 'key')} at a different "
                "task index, e.g. " + ", ".join(
                    f"{text.clip(e['key'])} storm index {e['s']} (task {e['s_task']}), "
                    f"runtime index {e['r']} (task {e['r_task']})"
                    for e in row["moved_examples"])))


def _keyed_system(traces: Traces, sub: Subscription, finding: _Finding, system: str,
                  row: Row) -> None:
    def get(name: str) -> object:
        return row[f"{system}_{name}"]

    if sub.grouping == "global":
        lowest = (traces.tasks.get(system, {}).get(sub.target) or [None])[0]
        finding.said[system] = (f"{text.count(get('tuples'), 'tuple')}, at tasks "
                                f"{get('all_tasks')} (lowest {lowest})")
        if get("off"):
            others = [t for t in get("all_tasks") if t != lowest]
            finding.problem(system, f"{text.count(get('off'), 'tuple')} reached tasks "
                                    f"{others} instead of the lowest task {lowest}")
        return
    keys = text.count(get("keys"), "key")
    split = get("split")
    finding.said[system] = (f"{split:,} of {keys} on more than one task" if split
                            else f"{keys}, each on one task")
    if split:
        finding.problem(system, f"{text.count(split, 'key')} on more than one task, e.g. "
                        + ", ".join(f"{text.clip(e['key'])} at tasks {e['tasks']}"
                                    for e in get("examples")))


def _tally(expected: DataFrame, got: DataFrame, exact: bool, lenient: Column) -> list[Row]:
    """Expected and received copies per (system, sub, task, source task, values), one
    union and one aggregation instead of a join; then what differs, per system and sub."""
    keys = ["system", "sub", "task", "src_task", "values"]
    both = (expected.select(*keys, F.lit(1).alias("e"), F.lit(0).alias("r"))
            .unionByName(got.select(*keys, F.lit(0).alias("e"), F.lit(1).alias("r")))
            .groupBy(*keys).agg(F.sum("e").alias("e"), F.sum("r").alias("r")))
    bad = (F.col("e") != F.col("r")) if exact else lenient
    return both.groupBy("system", "sub").agg(
        F.count_if(bad).alias("bad"), F.sum("r").alias("received"),
        F.countDistinct(F.when(F.col("r") > 0, F.col("task"))).alias("tasks"),
        _examples(bad, "task", "values", "src_task", "e", "r").alias("examples")).collect()


def _all(traces: Traces, subs: list[Subscription], findings: dict[int, _Finding],
         exact: bool) -> None:
    expected = (routes.emitted(traces.records, subs).filter(F.col("direct").isNull())
                .withColumn("target", routes.target_of(subs))
                .withColumn("task", F.explode(routes.tasks_of(traces, "target"))))
    lenient = (F.col("e") > 0) != (F.col("r") > 0)
    for row in _tally(expected, routes.received(traces.records, subs), exact, lenient):
        finding, system = findings[row["sub"]], row["system"]
        finding.said[system] = (f"{text.count(row['received'], 'tuple')} over "
                                f"{text.count(row['tasks'], 'task')}")
        if row["bad"]:
            finding.problem(system, (
                f"{text.count(row['bad'], 'tuple')} not received by every task as often as "
                "emitted, e.g. " + ", ".join(
                    f"task {x['task']} got {text.clip(x['values'])} from task "
                    f"{x['src_task']} ×{x['r']}, emitted ×{x['e']}" for x in row["examples"])))


def _direct(traces: Traces, subs: list[Subscription], findings: dict[int, _Finding],
            exact: bool, unrepeatable: frozenset[str]) -> None:
    named = (routes.emitted(traces.records, subs).filter(F.col("direct").isNotNull())
             .withColumn("target", routes.target_of(subs))
             .withColumn("task", F.col("direct"))
             .withColumn("index", routes.index(traces, component="target"))
             .filter(F.col("index").isNotNull()))  # a task of another component: dropped
    lenient = (F.col("r") > 0) & (F.col("e") == 0)
    for row in _tally(named, routes.received(traces.records, subs), exact, lenient):
        finding, system = findings[row["sub"]], row["system"]
        finding.said[system] = f"{text.count(row['received'], 'tuple')} at the tasks named"
        if row["bad"]:
            finding.said[system] = f"{text.count(row['bad'], 'tuple')} off their named task"
            finding.problem(system, (
                f"{text.count(row['bad'], 'tuple')} not exactly at the task its emit named, "
                "e.g. " + ", ".join(
                    f"{text.clip(x['values'])} from task {x['src_task']} at task {x['task']}"
                    f": named ×{x['e']}, received ×{x['r']}" for x in row["examples"])))
    if len(traces.systems) < len(schema.SYSTEMS):
        return
    s, r = F.col(S), F.col(R)
    differ = (s != r) if exact else ((s > 0) != (r > 0))
    rows = (named.groupBy("sub", "values", "index").pivot("system", list(schema.SYSTEMS))
            .count().fillna(0, subset=list(schema.SYSTEMS))
            .groupBy("sub").agg(F.count_if(differ).alias("differ"),
                                _examples(differ, "values", "index", s.alias("s"),
                                          r.alias("r")).alias("examples"))
            .collect())
    skip = {s.number for s in subs if s.source in unrepeatable}
    for row in rows:
        if row["differ"] and row["sub"] not in skip:
            findings[row["sub"]].problem(CROSS, (
                f"{text.count(row['differ'], 'tuple')} named a task of another index, "
                "e.g. " + ", ".join(
                    f"{text.clip(x['values'])} to index {x['index']}: storm ×{x['s']}, "
                    f"runtime ×{x['r']}" for x in row["examples"])))


def _load(traces: Traces, subs: list[Subscription], findings: dict[int, _Finding]) -> None:
    rows = (routes.received(traces.records, subs)
            .groupBy("system", "sub", "task").count().collect())
    load: dict[tuple[str, int], dict[int, int]] = {}
    for row in rows:
        load.setdefault((row["system"], row["sub"]), {})[row["task"]] = row["count"]
    for sub in subs:
        for system in traces.systems:
            tasks = dict.fromkeys(traces.tasks.get(system, {}).get(sub.target, []), 0)
            tasks.update(load.get((system, sub.number), {}))
            findings[sub.number].said[system] = text.tasks(tasks)
