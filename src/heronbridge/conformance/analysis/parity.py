"""Parity: each component emits the same values on each stream on both systems.

Undisturbed runs compare exact multisets of values (canonical JSON text). When the runs
were disturbed (the scenario injects faults, or the spouts replayed differently on the
two systems, e.g. after timeouts), which tuples were replayed, and so emitted again
downstream, depends on arrival order; then parity means the same *distinct* values per
component and stream, and the counts are shown. Values that depend on routing or timing
(a task id, a batch's contents) are not forgiven here: the scenario declares them.

Both systems seed each task's random numbers alike and stop each spout task after the
same number of emits, so a spout that draws random values emits the same ones. A spout
that emits different values anyway, and whose code reads a clock or an outside source
(see `conformance.inputs`), has an input no run can repeat: its parity and that of
every component downstream is not judged (an info verdict says why), and the checks
that hold whatever the input (grouping, delivery, order) are.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pyspark.sql import Column, DataFrame, Row
from pyspark.sql import functions as F

from ..trace import schema
from . import text
from .results import FAIL, INFO, NO_TRACES, PASS, Verdict
from .topology import Topology
from .traces import Traces

CHECK = "parity"


@dataclass
class Parity:
    verdicts: list[Verdict]
    # spout -> its reads, for the spouts whose differing output is explained by them
    unrepeatable: dict[str, list[str]] = field(default_factory=dict)
    unjudged: set[str] = field(default_factory=set)  # those spouts and all downstream

    def notes(self) -> list[str]:
        return [f"{spout} emitted different values on the two systems, and its code reads "
                f"{', '.join(reads[:3])}: its input cannot be repeated, so parity is not "
                f"judged for {', '.join(sorted(self.unjudged))}; grouping, delivery and "
                "order are (they hold whatever the input)"
                for spout, reads in sorted(self.unrepeatable.items())]


def check(traces: Traces, topology: Topology, *, exact: bool,
          reads: dict[str, list[str]] | None = None) -> Parity:
    """`reads`: each spout's clock and outside-source reads (None: not known)."""
    storm, runtime = F.col(schema.STORM), F.col(schema.RUNTIME)
    differs = (storm != runtime) if exact else ((storm > 0) != (runtime > 0))

    def counted(*more: Column) -> DataFrame:
        """Emits per component, stream and value (by its 64-bit hash: a number is
        cheaper to group on than the text), on each system."""
        system = F.col("system")
        return (traces.records.filter(F.col("ev") == schema.EMIT)
                .groupBy("component", "stream", F.xxhash64("values").alias("hash")).agg(
                    F.count_if(system == schema.STORM).alias(schema.STORM),
                    F.count_if(system == schema.RUNTIME).alias(schema.RUNTIME), *more))

    rows = (counted().groupBy("component", "stream").agg(
        F.sum(storm).alias("storm_n"), F.sum(runtime).alias("runtime_n"),
        F.count_if(storm > 0).alias("storm_d"), F.count_if(runtime > 0).alias("runtime_d"),
        F.count_if(differs).alias("differ")).collect())
    if any(r["differ"] for r in rows):  # then, and only then, the values to show
        examples = {(r["component"], r["stream"]): r["examples"] for r in (
            counted(F.first("values").alias("values")).filter(differs)
            .groupBy("component", "stream").agg(F.slice(F.sort_array(F.collect_list(
                F.struct("values", storm.alias("s"), runtime.alias("r")))), 1,
                text.EXAMPLES).alias("examples")).collect())}
        rows = [Row(**r.asDict(), examples=examples.get((r["component"], r["stream"]), []))
                for r in rows]
    found = {(r["component"], r["stream"]): r for r in rows}
    subjects = {(c, s) for c, streams in topology.streams.items() for s in streams} | set(found)
    missing = [s for s in schema.SYSTEMS if s not in traces.systems]
    result = Parity([])
    if not missing:
        result.unrepeatable = {
            spout: (reads or {}).get(spout) for spout in topology.spouts
            if (reads or {}).get(spout) and any(r["differ"] for (c, _), r in found.items()
                                                if c == spout)}
        result.unjudged = downstream(topology, set(result.unrepeatable))
    verdicts = result.verdicts
    for component, stream in sorted(subjects):
        row = found.get((component, stream))
        said = {system: _said(row, system) if system in traces.systems else NO_TRACES
                for system in schema.SYSTEMS}
        if component in result.unjudged:
            why = (f"not judged: {component}'s code reads "
                   f"{', '.join(result.unrepeatable[component][:3])}, and it emitted "
                   "different values on the two systems" if component in result.unrepeatable
                   else "not judged: its input comes from a spout whose output cannot be "
                        f"repeated ({', '.join(sorted(result.unrepeatable))})")
            verdicts.append(Verdict(CHECK, f"{component}/{stream}", said[schema.STORM],
                                    said[schema.RUNTIME], INFO, why))
            continue
        if missing:
            detail = text.listing(f"no {s} traces: nothing to compare with" for s in missing)
            verdicts.append(Verdict(CHECK, f"{component}/{stream}", said[schema.STORM],
                                    said[schema.RUNTIME], FAIL, detail))
            continue
        differ = row["differ"] if row else 0
        if differ:
            how = "a different number of times" if exact else "on one system only"
            examples = ", ".join(f"{text.clip(e['values'])} (storm ×{e['s']}, runtime "
                                 f"×{e['r']})" for e in row["examples"])
            detail = f"{text.count(differ, 'value')} emitted {how}, e.g. {examples}"
            if topology.kinds.get(component) == "spout" and reads is not None:
                detail += ("; the spout's random numbers were seeded alike, and its code "
                           "reads no clock or outside source that would explain it")
        else:
            detail = "" if exact else ("compared as sets of distinct values: the runs were "
                                       "disturbed (faults or different replays)")
        verdicts.append(Verdict(CHECK, f"{component}/{stream}", said[schema.STORM],
                                said[schema.RUNTIME], FAIL if differ else PASS, detail))
    return result


def downstream(topology: Topology, sources: set[str]) -> set[str]:
    """`sources` and every component that reads from them, directly or not."""
    found, todo = set(sources), list(sources)
    while todo:
        source = todo.pop()
        for sub in topology.subscriptions:
            if sub.source == source and sub.target not in found:
                found.add(sub.target)
                todo.append(sub.target)
    return found


def _said(row: Row | None, system: str) -> str:
    if row is None:
        return "0 tuples"
    total, distinct = row[f"{system}_n"], row[f"{system}_d"]
    return f"{text.count(total, 'tuple')}, {distinct:,} distinct"
