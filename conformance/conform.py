"""One conformance run: the scenario on Storm, then on the runtime, then the analysis.

Both systems run one after the other (each gets the whole machine), each until its
traces say the topology is done; the analysis reads both trace sets.
"""

from __future__ import annotations

import fnmatch
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import ConformanceError, plan_file
from .scenario import RUN, Scenario
from .trace import schema

# A display gets (system, what is happening) while the runs go on.
Display = Callable[[str, str], None]


@dataclass
class SystemRun:
    """How one system's run went, whatever the system."""

    system: str
    finished: bool
    seconds: float
    explanation: str = ""  # why it did not finish, when it did not
    records: int = 0
    logs: Path | None = None
    startup: float | None = None  # seconds from launch to the first emit


@dataclass
class Outcome:
    scenario: Scenario
    run_dir: Path
    runs: dict[str, SystemRun]
    analysis: Any  # heronbridge.conformance.analysis.Analysis
    run_verdicts: list[Any] = field(default_factory=list)

    @property
    def verdicts(self) -> list[Any]:
        return [*self.run_verdicts, *self.analysis.verdicts]

    @property
    def ok(self) -> bool:
        return all(v.verdict != "fail" for v in self.verdicts)


def conform(scenario: Scenario, run_dir: Path, *, multilang: bool = False,
            spark_master: str | None = None, spark: Any = None, home: Path | None = None,
            display: Display | None = None) -> Outcome:
    """`home` holds the Storm jars' cache (default: the runtime's home)."""
    from heronbridge.compat.streamparse import load_project

    from .analysis import Verdict, analyse
    from .runtime_side import run_on_runtime
    from .storm import fetch, run_on_storm

    show = display or (lambda system, text: None)
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    project = load_project(scenario.project, scenario.topology, scenario.environment,
                           scenario.storm_options(), False, run_dir / "storm" / "resources")
    plan_file.write(project.plan, run_dir)

    runs: dict[str, SystemRun] = {}
    show(schema.STORM, f"resolving Storm with Maven (once) for {project.name}")
    install = fetch(home)
    show(schema.STORM, f"starting Storm {install.version} in local mode")
    runs[schema.STORM] = _timed(schema.STORM, lambda: run_on_storm(
        project, scenario, run_dir, install=install,
        on_progress=lambda snap: show(schema.STORM, _progress(snap))))
    show(schema.RUNTIME, "starting the runtime" + (" (multilang)" if multilang else ""))
    runs[schema.RUNTIME] = _timed(schema.RUNTIME, lambda: run_on_runtime(
        scenario.project, scenario, run_dir, multilang=multilang,
        on_progress=lambda snap: show(schema.RUNTIME, _progress(snap))))

    show("analysis", "comparing the traces on Spark")
    analysis = analyse(run_dir, scenario, spark=spark, spark_master=spark_master)
    run_verdicts = [_run_verdict(Verdict, scenario, runs)]
    return Outcome(scenario, run_dir, runs, analysis, run_verdicts)


def _timed(system: str, run: Callable[[], Any]) -> SystemRun:
    """Run one system; a run that did not finish still leaves its traces to compare."""
    began = time.monotonic()
    try:
        result = run()
        explanation = getattr(result, "explanation", "") or ""
    except ConformanceError as exc:
        result = getattr(exc, "run", None)  # e.g. a timeout, with what it got to
        if result is None:
            return SystemRun(system, False, time.monotonic() - began, str(exc))
        explanation = str(exc)
    snapshot = result.snapshot
    first = snapshot.first_emit if snapshot is not None else None
    return SystemRun(system, bool(result.finished), time.monotonic() - began, explanation,
                     snapshot.records if snapshot is not None else 0,
                     getattr(result, "java_log", None) or getattr(result, "workdir", None),
                     None if first is None else max(0.0, first - result.started))


def _progress(snapshot: Any) -> str:
    return (f"{snapshot.records:,} trace records, {snapshot.pending:,} spout tuples pending, "
            f"quiet {snapshot.quiet_for:.1f}s")


def _run_verdict(verdict_type: type, scenario: Scenario, runs: dict[str, SystemRun]) -> Any:
    def said(run: SystemRun) -> str:
        if run.finished:
            up = "" if run.startup is None else f", first emit after {run.startup:.1f}s"
            return f"finished in {run.seconds:.1f}s ({run.records:,} records{up})"
        return f"did not finish: {run.explanation}"

    storm, runtime = runs[schema.STORM], runs[schema.RUNTIME]
    ok = storm.finished and runtime.finished
    verdict = verdict_type(RUN, "both systems", said(storm), said(runtime),
                           "pass" if ok else "fail")
    if not ok:
        for divergence in scenario.divergences:
            failed = [r.system for r in (storm, runtime) if not r.finished]
            if divergence.check == RUN and fnmatch.fnmatchcase(verdict.subject,
                                                               divergence.subject) \
                    and (divergence.system is None or failed == [divergence.system]):
                verdict.verdict = "known divergence"
                verdict.detail = divergence.reason
    return verdict
