"""Delivery: what became of every spout message id.

The hook sees the callbacks the system sends a spout (`spout_ack`, `spout_fail`), not
what the spout does with them. So, per spout task and msg id:

- acked: the last callback after the id's last emit is an ack;
- given up: it is a fail and the spout did not emit the id again (pystorm's
  ReliableSpout after `max_fails` acks the id itself, which sends no message);
- pending: no callback came after the id's last emit: the tuple tree was lost;
- unknown: a callback for an id the task never emitted.

At-least-once (plan.json `reliable`) is a guarantee, judged on each system: it fails
on pending or unknown ids, on more callbacks than emits of one id (each emit gets
exactly one callback), and on fewer fail callbacks than the fails bolts gave the
tuples they received straight from the spout (when each spout tuple reaches one bolt
task, every such fail is a tuple tree of its own, which the spout must hear of).

Replays are the extra emits of one id. How many an id gets depends on where a grouping
sends each attempt (shuffle picks tasks at random, on Storm as on the runtime), so when
the runs had fails or replays, or the scenario injects faults, each id's history is
shown but not compared. When neither system failed or replayed anything, or when the
scenario asks for it (`delivery: strict`, for a topology whose replays are
deterministic), each id must also be handled the same way on both systems (same
emits, same outcome), matched by spout task index and msg id.
At-most-once fails on any replay or fail callback.

Effectively-once (the runtime under EFFECTIVELY_ONCE, `rewinds`) has no acking: the
runtime acks each msg id as it is emitted, and a spout emits an id again when a
rollback rewinds it to a checkpoint's offset. Those extra emits are rewinds, not
replays: that tuples are processed again is the mode's design (the state check judges
that their changes took effect once). Such a system fails on pending or unknown ids,
on more callbacks than emits and on any fail callback; each id's history is never
compared with the other system's, and bolts' fails are not expected to reach a spout.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import Column, Row
from pyspark.sql import functions as F

from ..trace import schema
from . import routes, text
from .results import FAIL, NO_TRACES, PASS, Verdict
from .topology import Topology
from .traces import Traces

CHECK = "delivery"
CALLBACKS = (schema.SPOUT_ACK, schema.SPOUT_FAIL)
OUTCOMES = {"acked": "acked", "given up": "given_up", "pending": "pending",
            "unknown": "unknown"}
PROBLEMS = ("pending", "unknown")


class Ledger:
    """Every spout msg id's emits and callbacks on each system, summed up per spout and
    compared across systems, in one query."""

    def __init__(self, traces: Traces, topology: Topology) -> None:
        self.traces = traces
        self.topology = topology
        ev, tracked = F.col("ev"), F.col("msg_id").isNotNull()
        callback = ev.isin(*CALLBACKS)
        # One row per (spout, task index, msg id), both systems side by side, in one
        # aggregation. A callback is its ord * 2, plus 1 for an ack: the latest one is
        # the largest, and says what it was.
        per_system = []
        for system in schema.SYSTEMS:
            mine = F.col("system") == system
            per_system += [
                F.count_if(mine).alias(f"{system}_records"),
                F.count_if(mine & (ev == schema.EMIT)).alias(f"{system}_emits"),
                F.count_if(mine & callback).alias(f"{system}_callbacks"),
                F.count_if(mine & (ev == schema.SPOUT_FAIL)).alias(f"{system}_fails"),
                F.max(F.when(mine & (ev == schema.EMIT), F.col("ord"))).alias(
                    f"{system}_last_emit"),
                F.max(F.when(mine & callback, F.col("ord") * 2 + F.when(
                    ev == schema.SPOUT_ACK, 1).otherwise(0))).alias(f"{system}_last_cb")]
        side = (traces.records
                .filter(F.col("component").isin(*topology.spouts or [""])
                        & ((ev == schema.EMIT) | callback))
                .withColumn("index", routes.index(traces))
                .groupBy("component", "index", "msg_id").agg(*per_system))
        for system in schema.SYSTEMS:
            def got(name: str, system: str = system) -> Column:
                return F.col(f"{system}_{name}")

            last_cb = got("last_cb")
            side = (side.withColumn(f"{system}_outcome", F.when(got("records") == 0, None)
                                    .when(got("emits") == 0, "unknown")
                                    .when(last_cb.isNull()
                                          | (F.floor(last_cb / 2) < got("last_emit")),
                                          "pending")
                                    .when(last_cb % 2 == 1, "acked")
                                    .otherwise("given up"))
                    .withColumn(f"{system}_extra", got("callbacks") > got("emits")))

        def some(condition: Column) -> Column:
            return F.slice(F.sort_array(F.collect_list(F.when(condition & tracked,
                                                              F.col("msg_id")))),
                           1, text.EXAMPLES)

        sums = []
        for system in schema.SYSTEMS:
            def col(name: str, system: str = system) -> Column:
                return F.col(f"{system}_{name}")

            outcome, emits = col("outcome"), col("emits")
            sums += [
                F.count_if(tracked & outcome.isNotNull()).alias(f"{system}_ids"),
                F.sum(emits).alias(f"{system}_emits"),
                F.sum(F.when(~tracked, emits)).alias(f"{system}_untracked"),
                F.sum(F.when(tracked & (emits > 1), emits - 1)).alias(f"{system}_replays"),
                F.count_if(tracked & (emits > 1)).alias(f"{system}_replayed_ids"),
                F.sum(F.when(tracked, col("fails"))).alias(f"{system}_fails"),
                F.count_if(tracked & col("extra")).alias(f"{system}_extra"),
                some(col("extra")).alias(f"{system}_extra_ids"),
                *[F.count_if(tracked & (outcome == kind)).alias(f"{system}_{name}")
                  for kind, name in OUTCOMES.items()],
                # Examples of what fails the check only: collecting every acked id to
                # show three would cost more than the rest of the check.
                *[some(outcome == kind).alias(f"{system}_{OUTCOMES[kind]}_ids")
                  for kind in PROBLEMS]]
        differ = tracked & (
            (F.coalesce(F.col("storm_emits"), F.lit(0))
             != F.coalesce(F.col("runtime_emits"), F.lit(0)))
            | ~F.col("storm_outcome").eqNullSafe(F.col("runtime_outcome")))
        rows = side.groupBy("component").agg(
            *sums, F.count_if(tracked).alias("ids"), F.count_if(differ).alias("differ"),
            F.slice(F.sort_array(F.collect_list(F.when(differ, F.struct(
                "msg_id", "storm_emits", "storm_outcome", "runtime_emits",
                "runtime_outcome")))), 1, text.EXAMPLES).alias("examples"),
        ).collect()
        # Only when bolts failed something (the block heads say): a pass over every input.
        self.bolt_fails = self._bolt_fails() if topology.reliable and traces.count(
            schema.FAIL, topology.bolts) != 0 else {}
        self.summary: dict[tuple[str, str], dict[str, Any]] = {}
        self.rewinds: frozenset[str] = frozenset()
        self.cross: dict[str, tuple[int, int, list]] = {}
        both = len(traces.systems) == len(schema.SYSTEMS)
        for row in rows:
            for system in traces.systems:
                mine = {k[len(system) + 1:]: v or 0 for k, v in row.asDict().items()
                        if k.startswith(f"{system}_")}
                if mine["ids"] or mine["untracked"]:
                    self.summary[(system, row["component"])] = mine
            if both:
                self.cross[row["component"]] = (row["ids"], row["differ"], row["examples"])

    def _bolt_fails(self) -> dict[tuple[str, str], int]:
        """{(system, spout): fails bolts gave tuples they received straight from that
        spout}: a fail and the receipt it answers share the task's file and tuple id."""
        ev = F.col("ev")
        mine = (self.traces.records
                .filter(F.col("component").isin(*self.topology.bolts or [""])
                        & (ev.isin(schema.RECV, schema.FAIL)))
                .groupBy("system", "file", "id").agg(
                    F.max(F.when(ev == schema.RECV, F.col("src"))).alias("src"),
                    F.count_if(ev == schema.FAIL).alias("fails"))
                .filter(F.col("src").isin(*self.topology.spouts or [""]) & (F.col("fails") > 0))
                .groupBy("system", "src").agg(F.sum("fails").alias("fails"))
                .collect())
        return {(r["system"], r["src"]): r["fails"] for r in mine}

    def disturbed(self) -> bool:
        """A system failed or replayed a spout tuple: replay counts follow groupings' choices."""
        return any(r["fails"] or r["replays"] for r in self.summary.values())

    def same_replays(self) -> bool:
        """No msg id was emitted or settled differently on the two systems (true when
        only one system left traces: there is nothing to differ from)."""
        return not any(differ for _, differ, _ in self.cross.values())

    def check(self, *, faults: bool, strict: bool = False,
              unrepeatable: frozenset[str] = frozenset(),
              rewinds: frozenset[str] = frozenset()) -> list[Verdict]:
        """`strict`: compare each id's history across systems even when the runs had
        fails or replays (the scenario says its replays are deterministic); never for
        the spouts in `unrepeatable`, whose output differs between the systems.
        `rewinds`: the systems that ran effectively-once (see the module's docstring)."""
        compare = not rewinds and (strict or not (faults or self.disturbed()))
        self.rewinds = rewinds
        verdicts = []
        for spout in self.topology.spouts:
            rows = {s: self.summary.get((s, spout)) for s in self.traces.systems}
            if not any(rows.values()):
                continue
            if self.topology.reliable:
                if not any(r and r["ids"] for r in rows.values()):
                    continue  # the spout tracks nothing: at-least-once does not apply
                verdicts.append(self._at_least_once(spout, rows,
                                                    compare and spout not in unrepeatable))
            else:
                verdicts.append(self._at_most_once(spout, rows))
        return verdicts

    def _at_least_once(self, spout: str, rows: dict[str, dict | None],
                       compare: bool) -> Verdict:
        said = {s: NO_TRACES for s in schema.SYSTEMS}
        problems, notes = [], []
        one_tree_each = self._one_tree_per_tuple(spout)
        for system, r in rows.items():
            if r is None:
                said[system] = "no emits"
                continue
            rewound = system in self.rewinds
            said[system] = (f"{text.count(r['ids'], 'id')}: {r['acked']:,} acked"
                            + (" as emitted (effectively once: no acking); "
                               f"{text.count(r['replays'], 're-emit')} after rollbacks"
                               if rewound else
                               f", {r['given_up']:,} given up; "
                               f"{text.count(r['replays'], 'replay')}")
                            + f", {text.count(r['fails'], 'fail')}")
            if r["untracked"]:
                said[system] += f"; {text.count(r['untracked'], 'emit')} without a msg id"
            for key, ids_key, what in (
                    ("pending", "pending_ids", "never acked nor failed after its last emit"),
                    ("unknown", "unknown_ids", "called back but never emitted"),
                    ("extra", "extra_ids", "called back more often than emitted")):
                if r[key]:
                    problems.append(f"{system}: {text.count(r[key], 'id')} {what}, e.g. "
                                    + ", ".join(text.clip(i) for i in r[ids_key]))
            if rewound:
                if r["fails"]:
                    problems.append(f"{system}: effectively once, yet told of "
                                    f"{text.count(r['fails'], 'fail')}")
                continue
            failed = self.bolt_fails.get((system, spout), 0)
            if one_tree_each and failed > r["fails"]:
                problems.append(f"{system}: bolts failed {text.count(failed, 'tuple')} "
                                f"received from {spout}, but it was told of "
                                f"{text.count(r['fails'], 'fail')}")
        ids, differ, examples = self.cross.get(spout, (0, 0, []))
        differences = (f"{differ:,} of {text.count(ids, 'id')} handled differently, e.g. "
                       + ", ".join(f"{text.clip(e['msg_id'])} (storm: {_fate(e, 'storm')}; "
                                   f"runtime: {_fate(e, 'runtime')})" for e in examples))
        if compare:
            missing = [s for s in schema.SYSTEMS if s not in self.traces.systems]
            problems += [f"no {s} traces: cannot compare how each id was handled"
                         for s in missing]
            if differ:
                problems.append(f"both: {differences}")
        elif differ and self.rewinds:
            notes.append(f"each id's history not compared (under effectively-once the "
                         "runtime emits an id again after a rollback rewinds its spout, "
                         "and processes those tuples again: by design, not a divergence; "
                         f"Storm replays failed trees): {differences}")
        elif differ:
            notes.append(f"each id's history not compared (the runs had fails or replays, "
                         f"whose number follows the groupings' choices): {differences}")
        return Verdict(CHECK, spout, said[schema.STORM], said[schema.RUNTIME],
                       FAIL if problems else PASS, text.listing(problems or notes))

    def _one_tree_per_tuple(self, spout: str) -> bool:
        """Each tuple the spout emits reaches exactly one bolt task: one subscription,
        not `all`. Then a bolt's fail of it fails a tree no other fail shares."""
        subs = [s for s in self.topology.subscriptions if s.source == spout]
        return len(subs) == 1 and subs[0].grouping != "all"

    def _at_most_once(self, spout: str, rows: dict[str, dict | None]) -> Verdict:
        said = {s: NO_TRACES for s in schema.SYSTEMS}
        problems = []
        for system, r in rows.items():
            if r is None:
                said[system] = "no emits"
                continue
            said[system] = ", ".join((text.count(r["emits"], "emit"),
                                      text.count(r["replays"], "replay"),
                                      text.count(r["fails"], "fail")))
            if r["replays"] or r["fails"]:
                problems.append(f"{system}: at-most-once, yet {r['replayed_ids']:,} ids "
                                f"replayed and {text.count(r['fails'], 'fail')} called back")
        return Verdict(CHECK, spout, said[schema.STORM], said[schema.RUNTIME],
                       FAIL if problems else PASS, text.listing(problems))


def _fate(example: Row, system: str) -> str:
    emits, outcome = example[f"{system}_emits"], example[f"{system}_outcome"]
    if outcome is None:
        return "never emitted"
    return f"{outcome} after {text.count(emits, 'emit')}"
