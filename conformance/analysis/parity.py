"""Parity: each component emits the same values on each stream on both systems.

Undisturbed runs compare exact multisets of values (canonical JSON text). When the runs
were disturbed (the scenario injects faults, or the spouts replayed differently on the
two systems, e.g. after timeouts), which tuples were replayed, and so emitted again
downstream, depends on arrival order; then parity means the same *distinct* values per
component and stream, and the counts are shown. Values that depend on routing or timing
(a task id, a batch's contents) are not forgiven here: the scenario declares them.
"""

from __future__ import annotations

from pyspark.sql import Row
from pyspark.sql import functions as F

from ..trace import schema
from . import text
from .results import FAIL, NO_TRACES, PASS, Verdict
from .topology import Topology
from .traces import Traces

CHECK = "parity"


def check(traces: Traces, topology: Topology, *, exact: bool) -> list[Verdict]:
    systems = list(schema.SYSTEMS)
    counts = (traces.records.filter(F.col("ev") == schema.EMIT)
              .groupBy("component", "stream", "values").pivot("system", systems).count()
              .fillna(0, subset=systems))
    storm, runtime = F.col(schema.STORM), F.col(schema.RUNTIME)
    differs = (storm != runtime) if exact else ((storm > 0) != (runtime > 0))
    rows = (counts.groupBy("component", "stream").agg(
        F.sum(storm).alias("storm_n"), F.sum(runtime).alias("runtime_n"),
        F.count_if(storm > 0).alias("storm_d"), F.count_if(runtime > 0).alias("runtime_d"),
        F.count_if(differs).alias("differ"),
        F.slice(F.sort_array(F.collect_list(F.when(differs, F.struct(
            "values", storm.alias("s"), runtime.alias("r"))))), 1, text.EXAMPLES)
        .alias("examples"),
    ).collect())
    found = {(r["component"], r["stream"]): r for r in rows}
    subjects = {(c, s) for c, streams in topology.streams.items() for s in streams} | set(found)
    missing = [s for s in schema.SYSTEMS if s not in traces.systems]
    verdicts = []
    for component, stream in sorted(subjects):
        row = found.get((component, stream))
        said = {system: _said(row, system) if system in traces.systems else NO_TRACES
                for system in schema.SYSTEMS}
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
        else:
            detail = "" if exact else ("compared as sets of distinct values: the runs were "
                                       "disturbed (faults or different replays)")
        verdicts.append(Verdict(CHECK, f"{component}/{stream}", said[schema.STORM],
                                said[schema.RUNTIME], FAIL if differ else PASS, detail))
    return verdicts


def _said(row: Row | None, system: str) -> str:
    if row is None:
        return "0 tuples"
    total, distinct = row[f"{system}_n"], row[f"{system}_d"]
    return f"{text.count(total, 'tuple')}, {distinct:,} distinct"
