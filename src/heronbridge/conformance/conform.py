"""One conformance run: the scenario on Storm, then on the runtime, then the analysis.

Both systems run one after the other (each gets the whole machine), each until its
traces say the topology is done; the analysis reads both trace sets.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import json
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import ConformanceError, inputs, plan_file
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
    bytes: int = 0  # of trace files
    spout_tasks: int = 0
    stopped: int = 0  # spout tasks the run's bound stopped
    crashes: str = ""  # tasks restarted for no injected fault, and why where known


@dataclass
class Outcome:
    scenario: Scenario
    run_dir: Path
    runs: dict[str, SystemRun]
    analysis: Any  # heronbridge.conformance.analysis.Analysis
    run_verdicts: list[Any] = field(default_factory=list)
    migration: Any = None  # the codemod's outcome, when the runtime ran the migrated copy
    conditions: list[str] = field(default_factory=list)  # how the runs were made alike

    @property
    def notes(self) -> list[str]:
        """What the reader should know besides the verdicts: how the runs were bounded
        and seeded, and what the analysis did not judge, and why."""
        return [*self.conditions, *self.analysis.notes]

    @property
    def verdicts(self) -> list[Any]:
        return [*self.run_verdicts, *self.analysis.verdicts]

    @property
    def ok(self) -> bool:
        return all(v.verdict != "fail" for v in self.verdicts)


def conform(scenario: Scenario, run_dir: Path, *, multilang: bool = False,
            spark_master: str | None = None, spark: Any = None, home: Path | None = None,
            display: Display | None = None, migrated: bool = False,
            storm_from: Path | None = None,
            launcher: Callable[..., Any] | None = None,
            java_jars: Path | None = None) -> Outcome:
    """`home` holds the Storm jars' cache (default: the runtime's home). With `migrated`
    the runtime runs a copy of the project the codemod migrated to heronpy; with
    `storm_from` Storm's side is an earlier run of the same scenario (its run dir);
    `launcher` submits the runtime's side instead of a Launch (runtime_side.Launcher);
    `java_jars`: a folder of the project's Java code, besides lein's jar."""
    from heronbridge.compat.streamparse import load_project

    from .analysis import Verdict, analyse
    from .runtime_side import run_on_runtime
    from .storm import fetch, run_on_storm

    show = display or (lambda system, text: None)
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    project = load_project(scenario.project, scenario.topology, scenario.environment,
                           scenario.storm_options(), False, run_dir / "storm" / "resources",
                           java_jars=java_jars)
    plan_file.write(project.plan, run_dir)
    inputs.write(run_dir, inputs.scan_project(project))

    runs: dict[str, SystemRun] = {}
    if storm_from is not None:
        runs[schema.STORM] = _earlier_storm(Path(storm_from), run_dir, scenario)
    else:
        show(schema.STORM, f"resolving Storm with Maven (once) for {project.name}")
        install = fetch(home)
        show(schema.STORM, f"starting Storm {install.version} in local mode")
        # Storm's side reads scenario.faults: those of the runtime's side only are left out
        storm_side = dataclasses.replace(scenario, faults=scenario.faults_on(schema.STORM))
        runs[schema.STORM] = _timed(schema.STORM, lambda: run_on_storm(
            project, storm_side, run_dir, install=install,
            on_progress=lambda snap: show(schema.STORM, _progress(snap))))
        _save_run(runs[schema.STORM], run_dir)
    if scenario.seconds is not None:
        # Storm's spouts stopped on time: the runtime's stop at the same emits, so that
        # both compare the same prefix of each spout's output.
        scenario = dataclasses.replace(scenario, counts=_counts(run_dir, project.plan))
    runtime_project, migration = scenario.project, None
    if migrated:
        show(schema.RUNTIME, "migrating a copy of the project to heronpy")
        runtime_project, migration = _migrated_copy(scenario, run_dir)
        scenario = dataclasses.replace(
            scenario, divergences=[*scenario.divergences,
                                   *_explained(scenario, migration)])
    show(schema.RUNTIME, "starting the runtime" + (" (multilang)" if multilang else ""))
    runs[schema.RUNTIME] = _timed(schema.RUNTIME, lambda: run_on_runtime(
        runtime_project, scenario, run_dir, multilang=multilang, launcher=launcher,
        java_jars=java_jars, storm_home=home,
        on_progress=lambda snap: show(schema.RUNTIME, _progress(snap))))

    show("analysis", "comparing the traces on Spark")
    analysis = analyse(run_dir, scenario, spark=spark, spark_master=spark_master)
    run_verdicts = [_run_verdict(Verdict, scenario, runs)]
    return Outcome(scenario, run_dir, runs, analysis, run_verdicts, migration,
                   _conditions(scenario, runs))


RUN_FILE = "run.json"  # how Storm's run went, beside its traces


def _save_run(run: SystemRun, run_dir: Path) -> None:
    data = {**dataclasses.asdict(run), "logs": str(run.logs) if run.logs else None}
    path = run_dir / schema.STORM / RUN_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def _earlier_storm(earlier: Path, run_dir: Path, scenario: Scenario) -> SystemRun:
    """Storm's traces and run record from an earlier run dir of the same scenario."""
    source = earlier / schema.STORM
    if not (source / RUN_FILE).is_file():
        msg = (f"scenario {scenario.name!r}: expected an earlier run's Storm side in "
               f"{str(source)!r} (its {RUN_FILE} and traces), found none")
        raise ConformanceError(msg)
    target = run_dir / schema.STORM
    if target.resolve() != source.resolve():
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(source, target, ignore=shutil.ignore_patterns("resources"))
    data = json.loads((target / RUN_FILE).read_text())
    data["logs"] = Path(data["logs"]) if data.get("logs") else None
    return SystemRun(**data)


def _migrated_copy(scenario: Scenario, run_dir: Path) -> tuple[Path, Any]:
    from heronbridge.migrate.runner import migrate

    copy = run_dir / "migrated" / scenario.project.name
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(scenario.project, copy,
                    ignore=shutil.ignore_patterns("__pycache__", ".ruff_cache"))
    migration = migrate(copy, jobs=1)
    if migration.failed:
        failed = {f.path: f.error for f in migration.failed}
        msg = f"scenario {scenario.name!r}: the codemod failed on {failed}"
        raise ConformanceError(msg)
    return copy, migration


def _explained(scenario: Scenario, migration: Any) -> list[Any]:
    """The migrated divergences, each explained by a TODO marker of its rule in the
    copy: one whose marker is missing is an error, not a divergence."""
    marked = {entry.rule for entry in migration.todos}
    for divergence in scenario.migrated_divergences:
        if divergence.marker not in marked:
            msg = (f"scenario {scenario.name!r}: a migrated divergence ({divergence.check}, "
                   f"{divergence.subject}) names marker {divergence.marker}, but the "
                   f"migrated copy has markers of {sorted(marked) or 'no rule'}")
            raise ConformanceError(msg)
    return list(scenario.migrated_divergences)


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
                     None if first is None else max(0.0, first - result.started),
                     *((snapshot.bytes, snapshot.spout_tasks, snapshot.stopped)
                       if snapshot is not None else ()),
                     crashes=getattr(result, "crashes", "") or _restarts(snapshot))


def _restarts(snapshot: Any) -> str:
    """The tasks whose traces show more processes than injected exits explain."""
    if snapshot is None or not snapshot.restarts:
        return ""
    return "; ".join(f"{component!r} task {task} was restarted {n} time{'s' if n != 1 else ''}"
                     for (component, task), n in snapshot.restarts.items())


def _progress(snapshot: Any) -> str:
    return snapshot.line()


def _counts(run_dir: Path, plan: Any) -> dict[str, list[int | None]]:
    """{spout: emits per task index} where Storm's bound stopped a spout task."""
    from .trace.progress import Progress

    stops = Progress(run_dir / schema.STORM / schema.TRACES).stops()
    return {spout: [by_index.get(i) for i in range(plan.components[spout].parallelism)]
            for spout, by_index in stops.items() if spout in plan.components}


def _conditions(scenario: Scenario, runs: dict[str, SystemRun]) -> list[str]:
    found = []
    bounds = [f"{scenario.tuples:,} emits" if scenario.tuples is not None else "",
              f"{scenario.seconds:g} seconds" if scenario.seconds is not None else ""]
    bound = " or ".join(b for b in bounds if b)
    if bound:
        stopped = ", ".join(f"{s}: {r.stopped} of {r.spout_tasks}" for s, r in runs.items()
                            if r.spout_tasks)
        found.append(f"each spout task was asked for tuples until {bound} (spout tasks "
                     f"stopped so: {stopped or 'none'}), then the topology drained"
                     + ("; the runtime's stopped at the emits Storm's had made"
                        if scenario.counts else ""))
    if scenario.seed is not None:
        found.append(f"Python's random (and numpy's, where a component's module imports "
                     f"it) was seeded per task from seed {scenario.seed}, the component and "
                     "the task's index, and string hashing fixed, alike on both systems")
    return found


def _run_verdict(verdict_type: type, scenario: Scenario, runs: dict[str, SystemRun]) -> Any:
    def said(run: SystemRun) -> str:
        crashed = f"; its code crashed: {run.crashes}" if run.crashes else ""
        if run.finished:
            up = "" if run.startup is None else f", first emit after {run.startup:.1f}s"
            bound = f", {run.stopped} of {run.spout_tasks} spout tasks stopped by the " \
                "bound" if run.stopped else ""
            return f"finished in {run.seconds:.1f}s ({run.records:,} records{up}{bound})" \
                + crashed
        return f"did not finish: {run.explanation}{crashed}"

    storm, runtime = runs[schema.STORM], runs[schema.RUNTIME]
    # A run whose components crashed compares what was left of it: it is no pass.
    ok = storm.finished and runtime.finished and not storm.crashes and not runtime.crashes
    verdict = verdict_type(RUN, "both systems", said(storm), said(runtime),
                           "pass" if ok else "fail")
    if not ok:
        for divergence in scenario.divergences:
            failed = [r.system for r in (storm, runtime) if not r.finished or r.crashes]
            if divergence.check == RUN and fnmatch.fnmatchcase(verdict.subject,
                                                               divergence.subject) \
                    and (divergence.system is None or failed == [divergence.system]):
                verdict.verdict = "known divergence"
                verdict.detail = divergence.reason
    return verdict
