"""One analysis: read both systems' traces into Spark and run the scenario's checks."""

from __future__ import annotations

from pathlib import Path

from py4j.protocol import Py4JJavaError
from pyspark.errors import PySparkException
from pyspark.sql import SparkSession

from .. import ConformanceError, inputs
from ..scenario import CHECKS, Scenario
from ..trace import schema
from . import delivery, divergences, grouping, order, parity, performance, topology
from . import traces as trace_files
from .results import FAIL, INFO, NO_TRACES, Analysis, Verdict
from .spark import tuned, using

SMALL_BYTES = 2 << 20  # trace sets below this (some 50,000 records) are run uncompiled


def analyse(run_dir: Path, scenario: Scenario, *, spark: SparkSession | None = None,
            spark_master: str | None = None) -> Analysis:
    """Compare `<run_dir>/{storm,runtime}/traces` against each other and against the
    topology in `<run_dir>/plan.json`.

    Runs on `spark` if given, else on a session on `spark_master` (embedded `local[*]`
    by default) that is stopped afterwards unless one was already active. A Spark
    master other than local must see `run_dir` at the same path (a shared file system).
    """
    run_dir = Path(run_dir)
    plan = topology.load(run_dir)
    wanted = [c for c in CHECKS if scenario.checks is None or c in scenario.checks]
    faults = bool(scenario.faults)
    paths = [p for system in schema.SYSTEMS for p in trace_files.files(run_dir, system)]
    notes: list[str] = []
    with using(spark, spark_master) as session, tuned(
            session, trace_files.partitions(paths, session.sparkContext.defaultParallelism),
            small=trace_files.size(paths) < SMALL_BYTES) as parts:
        try:
            traces = trace_files.load(session, run_dir, parts)
        except (PySparkException, Py4JJavaError) as exc:
            msg = (f"topology {plan.name!r}: expected trace files Spark can read in "
                   f"{str(run_dir)!r}, received {type(exc).__name__}: {exc}")
            raise ConformanceError(msg) from exc
        try:
            verdicts = _unreadable(traces, scenario) if "parity" in wanted else []
            ledger = None
            if "delivery" in wanted or (not faults and {"parity", "grouping"} & set(wanted)):
                ledger = delivery.Ledger(traces, plan)
            # Undisturbed runs are compared exactly; see parity's docstring.
            exact = not faults and (ledger is None or ledger.same_replays())
            unrepeatable: frozenset[str] = frozenset()
            if "parity" in wanted:
                judged = parity.check(traces, plan, exact=exact, reads=inputs.read(run_dir))
                verdicts += judged.verdicts
                notes += judged.notes()
                unrepeatable = frozenset(judged.unjudged)
            if "grouping" in wanted:
                verdicts += grouping.check(traces, plan, exact=exact, unrepeatable=unrepeatable)
            if "delivery" in wanted and ledger is not None:
                verdicts += ledger.check(faults=faults, strict=scenario.delivery == "strict",
                                         unrepeatable=unrepeatable)
            if "order" in wanted:
                verdicts += order.check(traces, plan)
            measured = performance.measure(traces, plan)
            if "latency" in wanted and plan.reliable and \
                    any(m.stats.latency_ms for m in measured.values()):
                verdicts.append(performance.latency_verdict(measured))
            if "throughput" in wanted and plan.bolts:
                verdicts.append(performance.throughput_verdict(measured))
        finally:
            traces.unpersist()
    verdicts = divergences.apply(verdicts, scenario.divergences, wanted)
    return Analysis(verdicts, {s: m.stats for s, m in measured.items()}, notes)


def _unreadable(traces: trace_files.Traces, scenario: Scenario) -> list[Verdict]:
    """Trace blocks cut short or unreadable: expected only from a process a fault killed."""
    if not traces.unreadable:
        return []
    said = {s: NO_TRACES if s not in traces.systems else
            f"{traces.unreadable.get(s, 0):,} unreadable blocks" for s in schema.SYSTEMS}
    killed = any(f["kind"] == "exit" for f in scenario.faults)
    return [Verdict("parity", "trace files", said[schema.STORM], said[schema.RUNTIME],
                    INFO if killed else FAIL,
                    "blocks of the trace files that are cut short or do not decode (a "
                    "process killed while writing); their records are left out")]
