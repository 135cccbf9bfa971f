"""Order: what one task emits on a stream reaches a subscriber task in emit order.

Storm promises it per pair of tasks; the check looks at fields- and global-grouped
subscriptions, per (system, source task, key): the values received, in arrival order,
must be the values emitted, in emit order. Equal values cannot be told apart, so a
sequence whose received values are not the emitted ones as a multiset (a tuple lost to
a fault or a crash, an extra one), or that arrived at more than one task, is not judged,
only counted: faults and replays must not pass for disorder, and losses and split keys
are the other checks' business.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from ..trace import schema
from . import routes, text
from .results import FAIL, NO_TRACES, PASS, Verdict
from .topology import KEYED, Topology
from .traces import Traces

CHECK = "order"


def check(traces: Traces, topology: Topology) -> list[Verdict]:
    subs = [s for s in topology.subscriptions if s.grouping in KEYED]
    if not subs:
        return []
    rows = _judge(traces, subs, topology, shown=False)
    if any(r["swapped"] for r in rows):  # then, and only then, the values to show
        rows = _judge(traces, subs, topology, shown=True)
    found = {(r["system"], r["sub"]): r for r in rows}
    verdicts = []
    for sub in subs:
        said = dict.fromkeys(schema.SYSTEMS, NO_TRACES)
        problems = []
        for system in traces.systems:
            r = found.get((system, sub.number))
            if r is None:
                said[system] = "no tuples"
                continue
            judged_n = r["sequences"] - r["skipped"]
            said[system] = (f"{r['swapped']:,} of {text.count(judged_n, 'key sequence')} out of "
                            "order" if r["swapped"] else
                            f"{text.count(judged_n, 'key sequence')} in order")
            if r["skipped"]:
                said[system] += (f" ({r['skipped']:,} not judged: tuples lost, extra or "
                                 "on several tasks)")
            if r["swapped"]:
                problems.append(f"{system}: " + ", ".join(
                    f"from task {e['src_task']}, key {text.clip(e['key'])}: tuple {e['at']} "
                    f"emitted {text.clip(e['sent'])}, received {text.clip(e['got'])}"
                    for e in r["examples"]))
        verdicts.append(Verdict(CHECK, sub.subject, said[schema.STORM], said[schema.RUNTIME],
                                FAIL if problems else PASS, text.listing(problems)))
    return verdicts


def _judge(traces: Traces, subs: list, topology: Topology, *, shown: bool) -> list:
    """Per system and subscription: key sequences, those not judged, those out of order
    and (`shown`) examples. Values and keys are compared by their 64-bit hashes, which
    are cheaper to sort and compare than their text, unless they are to be shown."""
    group = ["system", "sub", "src_task", "key"]
    value = F.col("values") if shown else F.xxhash64("values")
    key = routes.key(subs, topology.streams)
    key = (key if shown else F.xxhash64(key)).alias("key")
    sent_at = (routes.emitted(traces.records, subs).filter(F.col("direct").isNull())
               .select(*group[:3], key, "ord", value.alias("value"),
                       F.lit(True).alias("sent")))
    got_at = (routes.received(traces.records, subs)
              .select(*group[:3], key, "ord", value.alias("value"),
                      F.lit(False).alias("sent"), "task"))

    def in_order(sent: bool) -> Column:
        mine = F.collect_list(F.when(F.col("sent") == sent, F.struct("ord", "value")))
        return F.transform(F.sort_array(mine), lambda x: x["value"])

    sequences = (sent_at.unionByName(got_at, allowMissingColumns=True)
                 .groupBy(*group).agg(in_order(True).alias("sent"),
                                      in_order(False).alias("got"),
                                      F.count_distinct("task").alias("tasks")))
    sent, got = F.col("sent"), F.col("got")
    # A key split over tasks is the grouping check's failure, not disorder.
    judged = (F.col("tasks") <= 1) & (F.array_sort(sent) == F.array_sort(got))
    swapped = judged & (sent != got)
    first = F.array_position(F.zip_with(sent, got, lambda a, b: a == b), False)
    examples = [F.slice(F.sort_array(F.collect_list(F.when(swapped, F.struct(
        "src_task", "key", first.alias("at"), F.get(sent, first - 1).alias("sent"),
        F.get(got, first - 1).alias("got"))))), 1, text.EXAMPLES).alias("examples")] \
        if shown else []
    return (sequences.groupBy("system", "sub").agg(
        F.count("*").alias("sequences"), F.count_if(~judged).alias("skipped"),
        F.count_if(swapped).alias("swapped"), *examples).collect())
