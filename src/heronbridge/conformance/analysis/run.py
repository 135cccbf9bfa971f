"""One analysis: read both systems' traces into Spark and run the scenario's checks."""

from __future__ import annotations

from pathlib import Path

from py4j.protocol import Py4JJavaError
from pyspark.errors import PySparkException
from pyspark.sql import SparkSession

from .. import ConformanceError, inputs
from ..scenario import CHOSEN, STATE, Scenario
from ..trace import schema
from . import delivery, divergences, grouping, order, parity, performance, state, topology
from . import traces as trace_files
from .results import FAIL, INFO, NO_TRACES, PASS, Analysis, Verdict
from .spark import tuned, using

SMALL_BYTES = 2 << 20  # trace sets below this (some 50,000 records) are run uncompiled
REWINDS = ("effectively once: the runtime ran the topology under EFFECTIVELY_ONCE, where a "
           "failure rolls every task back to the last consistent checkpoint and rewinds the "
           "spouts, so its traces show tuples processed again after each rollback; that is "
           "the mode's design, not a divergence: delivery counts those emits as rewinds, "
           "not replays, and compares no msg id's history with Storm's. Storm, which has no "
           "effectively-once for Python components, ran it at least once")
STATE_PARITY = ("parity of the values that carry the state is left to the state check, "
                "which judges that each change took effect once")
NO_STATE = ("the scenario names no `state`: values that carry state may differ where "
            "Storm's replays counted again, and no check judges the final state")


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
    wanted = [c for c in CHOSEN if scenario.checks is None or c in scenario.checks]
    faults = bool(scenario.faults)
    # Effectively-once: the runtime's spouts rewind after a rollback (Storm ignores the key)
    rewinds = frozenset({schema.RUNTIME}) if plan.effectively_once else frozenset()
    paths = [p for system in schema.SYSTEMS for p in trace_files.files(run_dir, system)]
    notes: list[str] = [REWINDS, STATE_PARITY if scenario.state else NO_STATE] \
        if rewinds else []
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
                verdicts += _state_judged(judged.verdicts, plan, scenario)
                notes += judged.notes()
                unrepeatable = frozenset(judged.unjudged)
            if "grouping" in wanted:
                verdicts += grouping.check(traces, plan, exact=exact, unrepeatable=unrepeatable)
            if "delivery" in wanted and ledger is not None:
                verdicts += ledger.check(faults=faults, strict=scenario.delivery == "strict",
                                         unrepeatable=unrepeatable, rewinds=rewinds)
            if STATE in wanted and scenario.state is not None:
                judged_state = state.check(traces, plan, scenario.state,
                                           state.rollbacks(run_dir))
                verdicts.append(judged_state)
                if judged_state.verdict == PASS:  # why an overcount passed, in the notes
                    notes.append(f"state of {judged_state.subject}: {judged_state.detail}")
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


def _state_judged(verdicts: list[Verdict], plan: topology.Topology,
                  scenario: Scenario) -> list[Verdict]:
    """Parity of what the state's component and those downstream of it emit: their
    values carry the counts, which at-least-once replays raise on one system and not on
    the other; the state check judges those (a failing verdict becomes info)."""
    if scenario.state is None:
        return verdicts
    carried = parity.downstream(plan, {scenario.state.component})
    for verdict in verdicts:
        if verdict.verdict == FAIL and verdict.subject.split("/")[0] in carried:
            verdict.verdict = INFO
            verdict.detail = (f"not judged here: the values carry {scenario.state.component}"
                              "'s state, whose counts follow each system's delivery mode; "
                              f"the state check judges them (observed: {verdict.detail})")
    return verdicts


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
