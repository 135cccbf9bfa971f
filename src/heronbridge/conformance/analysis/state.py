"""State: a stateful topology's final state on each system, against the input's exact
counts.

The scenario names the component that keeps the state (`state.component`); each of its
emits carries a key and that key's count, and the last emit of a key (by time) is the
key's count when the run ended. The input is the tuples the input spout emitted, each
msg id once (a replay or a rewind emits it again), and the keys are a field's value or,
with `split`, the matches of a regular expression in it: the count each key must end
with is how often the input holds it.

What each system must show follows from its delivery mode:

- effectively once (the runtime under `topology.reliability.mode: EFFECTIVELY_ONCE`):
  exact. After a failure every task goes back to the last consistent checkpoint and the
  spouts rewind, so tuples are processed again, but their changes to the state take
  effect once;
- at least once (Storm, which has no effectively-once for Python components): never
  below the input. A tuple tree that fails after the state counted part of it is
  replayed and counted again, so counts may be higher; that is reported, not failed;
- at most once (acking off): never above it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from .. import ConformanceError
from ..scenario import StateSpec
from ..trace import schema
from . import routes, text
from .results import FAIL, NO_TRACES, PASS, Verdict
from .topology import Topology
from .traces import Traces

CHECK = "state"
EXACT, AT_LEAST, AT_MOST = "effectively once", "at least once", "at most once"
# The topology master's line per restore: "every task restored from <checkpoint id or
# 'empty state'> in 0.6s (rollback 2)"; the first one starts the topology.
ROLLBACK = re.compile(r"restored from (.+?) in \S+ \(rollback (\d+)\)")
EMPTY = "empty state"
NAMES = {schema.STORM: "Storm", schema.RUNTIME: "the runtime"}


@dataclass
class Tally:
    """One system's final state against the input's counts."""

    keys: int  # keys in the input or the state
    expected: int  # the input's total
    counted: int  # the state's total
    over: int = 0  # keys counted more often than the input holds them
    over_by: int = 0  # by how much in all
    over_most: int = 0  # the most one key is over
    under: int = 0  # keys counted less often (a key missing from the state: 0)
    under_by: int = 0
    under_most: int = 0
    # (key, input's count, state's count), the largest differences first
    examples: list[tuple[str, int, int]] = field(default_factory=list)

    @property
    def exact(self) -> bool:
        return self.over == 0 and self.under == 0

    def said(self) -> str:
        if self.exact:
            return (f"exact: {text.count(self.keys, 'key')}, {self.counted:,} counted "
                    "as the input holds")
        parts = []
        if self.over:
            parts.append(f"overcount: {self.over:,} of {text.count(self.keys, 'key')} "
                         f"over by {self.over_by:,} in all (at most {self.over_most:,})")
        if self.under:
            parts.append(f"undercount: {self.under:,} of {text.count(self.keys, 'key')} "
                         f"under by {self.under_by:,} in all (at most {self.under_most:,})")
        shown = ", ".join(f"{text.clip(k, 20)}: {c:,} for {e:,}" for k, e, c in self.examples)
        return (f"{'; '.join(parts)}; {self.counted:,} counted for {self.expected:,}"
                + (f", e.g. {shown}" if shown else ""))


def mode_of(system: str, topology: Topology) -> str:
    """The delivery mode a system ran the topology under: Storm has no effectively-once
    for Python components and ignores Heron's key."""
    if not topology.reliable:
        return AT_MOST
    if system == schema.RUNTIME and topology.effectively_once:
        return EXACT
    return AT_LEAST


@dataclass(frozen=True)
class Rollbacks:
    """The runtime's rollbacks after its first start."""

    count: int
    to_checkpoint: int  # of them, those that restored a consistent checkpoint

    def said(self) -> str:
        return (f"after {text.count(self.count, 'rollback')}"
                + (f" ({self.to_checkpoint:,} to a consistent checkpoint)"
                   if self.count else ""))


def judge(spec: StateSpec, tallies: dict[str, Tally | None], modes: dict[str, str],
          rollbacks: Rollbacks | None = None) -> Verdict:
    """The verdict on each system's tally (None: the system left no state to judge)."""
    said = dict.fromkeys(schema.SYSTEMS, NO_TRACES)
    problems, notes = [], []
    for system in schema.SYSTEMS:
        tally, mode, name = tallies.get(system), modes[system], NAMES[system]
        if tally is None:
            problems.append(f"{system}: no emits of {spec.component} or of "
                            f"{spec.source} to judge its state by")
            continue
        said[system] = f"{mode}: {tally.said()}"
        if system == schema.RUNTIME and rollbacks is not None:
            said[system] += f"; {rollbacks.said()}"
        if mode == EXACT and not tally.exact:
            problems.append(f"{system}: effectively-once, yet its state does not count each "
                            "input once")
        elif mode == AT_LEAST and tally.under:
            problems.append(f"{system}: at-least-once, yet {text.count(tally.under, 'key')} "
                            "counted less often than the input holds")
        elif mode == AT_MOST and tally.over:
            problems.append(f"{system}: at-most-once, yet {text.count(tally.over, 'key')} "
                            "counted more often than the input holds")
        elif mode == AT_LEAST and tally.over:
            notes.append(f"{name} overcounts, as at-least-once may: the tuple trees that "
                         "failed after the state had counted part of them were replayed and "
                         "counted again (expected, not a failure)")
        elif mode == EXACT:
            notes.append(f"{name} counts each input once: effectively-once means tuples "
                         "may be processed again after a rollback, while their changes to "
                         "the state take effect once")
    return Verdict(CHECK, f"{spec.component} ({spec.key} -> {spec.count})",
                   said[schema.STORM], said[schema.RUNTIME], FAIL if problems else PASS,
                   text.listing(problems or notes))


def check(traces: Traces, topology: Topology, spec: StateSpec,
          rollbacks: Rollbacks | None = None) -> Verdict:
    tallies = _tallies(traces, topology, spec)
    modes = {s: mode_of(s, topology) for s in schema.SYSTEMS}
    return judge(spec, {s: tallies.get(s) for s in schema.SYSTEMS}, modes, rollbacks)


def rollbacks(run_dir: Path) -> Rollbacks | None:
    """The runtime's rollbacks, as its topology master logged them; None: no log found.
    A restarted topology master numbers its restores anew: each log line counts once."""
    restores = [(int(n), source) for log in sorted(
        Path(run_dir, schema.RUNTIME).glob("**/topology-master.log"))
        for source, n in ROLLBACK.findall(log.read_text(errors="replace"))]
    if not restores:
        return None
    later = [source for n, source in restores if n > 1]
    return Rollbacks(len(later), sum(source != EMPTY for source in later))


def _tallies(traces: Traces, topology: Topology, spec: StateSpec) -> dict[str, Tally]:
    fields = topology.streams.get(spec.component, {}).get(spec.stream)
    source = topology.streams.get(spec.source, {}).get(spec.source_stream)
    for component, stream, declared, wanted in (
            (spec.component, spec.stream, fields, (spec.key, spec.count)),
            (spec.source, spec.source_stream, source, (spec.field,))):
        if declared is None or not set(wanted) <= set(declared):
            msg = (f"topology {topology.name!r}: expected {component!r} to declare stream "
                   f"{stream!r} with fields {list(wanted)} for the state check, received "
                   f"{list(declared) if declared is not None else 'no such stream'}")
            raise ConformanceError(msg)
    emits = traces.records.filter(F.col("ev") == schema.EMIT)

    def field_of(name: str, declared: tuple[str, ...]) -> Column:
        return F.get_json_object("values", f"$[{declared.index(name)}]")

    value = field_of(spec.field, source)
    if spec.lower:
        value = F.lower(value)
    inputs = (emits.filter((F.col("component") == spec.source)
                           & (F.col("stream") == spec.source_stream)
                           & F.col("msg_id").isNotNull())
              .withColumn("index", routes.index(traces))
              .groupBy("system", "index", "msg_id").agg(F.first(value).alias("value")))
    if spec.split:
        inputs = inputs.select("system", F.explode(F.regexp_extract_all(
            "value", F.lit(spec.split), F.lit(0))).alias("key"))
    else:
        inputs = inputs.select("system", F.col("value").alias("key"))
    expected = inputs.groupBy("system", "key").agg(F.count("*").alias("expected"))
    counted = (emits.filter((F.col("component") == spec.component)
                            & (F.col("stream") == spec.stream))
               .select("system", field_of(spec.key, fields).alias("key"),
                       field_of(spec.count, fields).cast("long").alias("n"), "t", "ord")
               .groupBy("system", "key").agg(
                   F.max_by("n", F.struct("t", "ord")).alias("counted")))
    both = (expected.join(counted, ["system", "key"], "full")
            .select("system", "key", F.coalesce("expected", F.lit(0)).alias("e"),
                    F.coalesce("counted", F.lit(0)).alias("c")))
    return {r["system"]: _tally(r) for r in _summed(both).collect()}


def _summed(both: DataFrame) -> DataFrame:
    e, c = F.col("e"), F.col("c")
    diff = c - e
    return both.groupBy("system").agg(
        F.count("*").alias("keys"), F.sum(e).alias("expected"), F.sum(c).alias("counted"),
        F.count_if(diff > 0).alias("over"),
        F.sum(F.when(diff > 0, diff)).alias("over_by"),
        F.max(F.when(diff > 0, diff)).alias("over_most"),
        F.count_if(diff < 0).alias("under"),
        F.sum(F.when(diff < 0, -diff)).alias("under_by"),
        F.max(F.when(diff < 0, -diff)).alias("under_most"),
        F.slice(F.sort_array(F.collect_list(F.when(diff != 0, F.struct(
            (-F.abs(diff)).alias("rank"), "key", "e", "c")))), 1, text.EXAMPLES)
        .alias("examples"))


def _tally(row: object) -> Tally:
    got = row.asDict()  # type: ignore[attr-defined]
    return Tally(**{k: got[k] or 0 for k in ("keys", "expected", "counted", "over",
                                               "over_by", "over_most", "under", "under_by",
                                               "under_most")},
                 examples=[(x["key"], x["e"], x["c"]) for x in got["examples"]])
