"""Each system's numbers: bolt input tuples over time and per task, and the complete
latency of acked spout tuples (emit to ack callback, from the ack's latest emit of the
same msg id, so a replayed tuple counts from its replay, as Storm measures it)."""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import Column
from pyspark.sql import functions as F

from ..trace import schema
from . import text
from .results import INFO, NO_TRACES, SystemStats, Verdict
from .topology import Topology
from .traces import Traces, inputs

BUCKETS_PER_DECADE = 5  # latency histogram: bucket bounds 10 ** (k / 5) ms
PERCENTILES = {"p50": 0.5, "p90": 0.9, "p99": 0.99}


@dataclass
class Measured:
    stats: SystemStats
    rate: float  # bolt input tuples per second, from the first to the last input
    span: float  # seconds from the first to the last bolt input


def measure(traces: Traces, topology: Topology) -> dict[str, Measured]:
    if not traces.systems:
        return {}
    first = F.lit(None).cast("double")
    for system, (t0, _) in traces.span.items():
        first = F.when(F.col("system") == system, F.lit(t0)).otherwise(first)
    rows = (inputs(traces.records)
            .groupBy("system", "component", "task",
                     F.floor(F.col("t") - first).alias("second"))
            .agg(F.count("*").alias("n"), F.min("t").alias("t0"), F.max("t").alias("t1"))
            .collect())
    out = {}
    for system in traces.systems:
        t0, t1 = traces.span.get(system, (0.0, 0.0))
        mine = [r for r in rows if r["system"] == system]
        per_second: dict[int, int] = {}
        load = {c: dict.fromkeys(traces.tasks.get(system, {}).get(c, []), 0)
                for c in topology.bolts}
        for r in mine:
            per_second[r["second"]] = per_second.get(r["second"], 0) + r["n"]
            task_load = load.setdefault(r["component"], {})
            task_load[r["task"]] = task_load.get(r["task"], 0) + r["n"]
        last = max(per_second, default=-1)
        began = min((r["t0"] for r in mine), default=0.0)
        ended = max((r["t1"] for r in mine), default=0.0)
        tuples = sum(per_second.values())
        out[system] = Measured(SystemStats(
            tuples=tuples,
            seconds=round(t1 - t0, 3),
            throughput=[(float(s), per_second.get(s, 0)) for s in range(last + 1)],
            load={c: dict(sorted(tasks.items())) for c, tasks in sorted(load.items())},
        ), tuples / (ended - began) if ended > began else float(tuples), ended - began)
    _latency(traces, topology, {s: m.stats for s, m in out.items()})
    return out


def _latency(traces: Traces, topology: Topology, out: dict[str, SystemStats]) -> None:
    ev = F.col("ev")
    # Per msg id, its emits and acks in order: each ack counts from the latest emit
    # before it. A group per id (a few records each) costs less than a window's sort.
    events = F.sort_array(F.collect_list(F.struct("ord", (ev == schema.SPOUT_ACK).alias(
        "ack"), "t")))
    start = F.struct(F.lit(None).cast("double").alias("sent"),
                     F.array().cast("array<double>").alias("ms"))

    def step(acc: Column, x: Column) -> Column:
        took = F.when(acc["sent"].isNotNull(),
                      F.concat(acc["ms"], F.array((x["t"] - acc["sent"]) * 1000.0))) \
            .otherwise(acc["ms"])
        return F.when(x["ack"], F.struct(acc["sent"].alias("sent"), took.alias("ms"))) \
            .otherwise(F.struct(x["t"].alias("sent"), acc["ms"].alias("ms")))

    acked = (traces.records
             .filter(F.col("component").isin(*topology.spouts or [""])
                     & F.col("msg_id").isNotNull()
                     & ((ev == schema.EMIT) | (ev == schema.SPOUT_ACK)))
             .groupBy("system", "component", "task", "msg_id")
             .agg(F.aggregate(events, start, step, lambda acc: acc["ms"]).alias("ms"))
             .select("system", F.explode("ms").alias("ms"))
             .cache())
    points = list(PERCENTILES.values())
    for row in acked.groupBy("system").agg(
            F.percentile_approx("ms", points, 10_000).alias("p"),
            F.max("ms").alias("max")).collect():
        if row["system"] in out:
            values = dict(zip(PERCENTILES, row["p"], strict=True))
            out[row["system"]].latency_ms = {**values, "max": row["max"]}
    bucket = F.ceil(F.log10(F.greatest(F.col("ms"), F.lit(1e-3))) * BUCKETS_PER_DECADE)
    hist: dict[str, list[tuple[float, int]]] = {}
    for row in acked.groupBy("system", bucket.alias("b")).count().orderBy("b").collect():
        bound = round(10 ** (row["b"] / BUCKETS_PER_DECADE), 6)
        hist.setdefault(row["system"], []).append((bound, row["count"]))
    for system, series in hist.items():
        if system in out:
            out[system].latency_hist = series
    acked.unpersist()


def latency_verdict(out: dict[str, Measured]) -> Verdict:
    said = {}
    for system in schema.SYSTEMS:
        s = out[system].stats if system in out else None
        if s is None:
            said[system] = NO_TRACES
        elif not s.latency_ms:
            said[system] = "no acked spout tuples"
        else:
            p = s.latency_ms
            said[system] = (f"p50 {_ms(p['p50'])}, p99 {_ms(p['p99'])}, "
                            f"max {_ms(p['max'])} ({text.count(_acks(s), 'ack')})")
    return Verdict("latency", "complete latency", said[schema.STORM], said[schema.RUNTIME],
                   INFO, "spout emit to ack callback")


def throughput_verdict(out: dict[str, Measured]) -> Verdict:
    said = {}
    for system in schema.SYSTEMS:
        if system not in out:
            said[system] = NO_TRACES
            continue
        s, rate, span = out[system].stats, out[system].rate, out[system].span
        peak = max((n for _, n in s.throughput), default=0)
        said[system] = (f"{text.count(s.tuples, 'tuple')} in {span:.2f} s: "
                        f"{rate:,.0f}/s, peak {peak:,} in one second")
    return Verdict("throughput", "bolt input tuples", said[schema.STORM],
                   said[schema.RUNTIME], INFO,
                   "from the first to the last bolt input")


def _ms(value: float) -> str:
    return f"{value:.2f} ms" if value < 10 else f"{value:,.0f} ms"


def _acks(s: SystemStats) -> int:
    return sum(n for _, n in s.latency_hist)

