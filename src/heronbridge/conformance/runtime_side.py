"""One scenario on the runtime: the project loaded as `heronbridge run` would, every task
under the tracing hook, run under the local scheduler until its traces say it is done.

Layout under the run dir: `plan.json`, `runtime/traces/` (the trace files) and, unless a
home is given, `runtime/home/` (the topology's state and its tasks' logs: a home of its
own, so that a run never meets the user's topologies); `runtime/checkpoints/` for an
effectively-once topology, whose tasks are traced by `trace.component_hook`.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from heronbridge.compat import CompatError
from heronbridge.compat.java import has_java
from heronbridge.compat.projects import load_project, topology_name
from heronbridge.compat.streamparse import Project
from heronbridge.jvm.storm import give_classpath
from heronbridge.runtime import control, failures
from heronbridge.runtime.config import CHECKPOINT_ROOT, EFFECTIVELY_ONCE, RELIABILITY_MODE
from heronbridge.runtime.errors import RuntimeKernelError
from heronbridge.runtime.health.config import ENABLED
from heronbridge.runtime.plan.tasks import TaskLayout
from heronbridge.runtime.scheduler import Home, jvm
from heronbridge.runtime.scheduler.launch import Launch
from heronbridge.shims import ShimError
from heronbridge.shims.storm import keys
from heronbridge.shims.storm.subprocess import child_argv

from . import ConformanceError, plan_file
from .scenario import Scenario, input_files
from .trace import component_hook, java, schema, seed
from .trace.hook import HOOK_PATH, check_faults
from .trace.progress import Progress, Snapshot
from .trace.proxy import proxy_argv
from .trace.traced_run import traced_argv

POLL_SECS = 0.25


@dataclass(frozen=True)
class RuntimeRun:
    topology: str
    started: float  # wall clock (time.time()), before the topology was submitted
    ended: float  # wall clock, when it was done (or given up) and stopped
    finished: bool  # the traces said done within the scenario's timeout
    snapshot: Snapshot  # the last progress read
    traces: Path
    workdir: Path  # the topology's working folder: container-*/logs/*.log
    crashes: str = ""  # the tasks that were restarted, and what they died of


class RuntimeTimeout(ConformanceError):
    """The run did not finish in time; `run` holds what it got to (traces included)."""

    def __init__(self, msg: str, run: RuntimeRun) -> None:
        super().__init__(msg)
        self.run = run


# (project, home, install) -> what Launch offers: start(timeout), stop(), workdir
Launcher = Callable[[Any, Home, Callable[[Path], None]], Any]


def run_on_runtime(project_dir: str | Path, scenario: Scenario, run_dir: str | Path, *,
                   multilang: bool = False, home: Home | str | Path | None = None,
                   on_progress: Callable[[Snapshot], Any] | None = None,
                   launcher: Launcher | None = None, java_jars: Path | None = None,
                   storm_home: Path | None = None) -> RuntimeRun:
    """`launcher`: how the topology is submitted instead of a Launch (the Nimbus front
    door's NimbusLaunch submits it through a Nimbus endpoint, as `sparse submit` would);
    `java_jars`: a folder of the project's Java code; `storm_home`: where Storm's jars
    are cached (Java components run on them)."""
    run_dir = Path(run_dir).resolve()
    traces = run_dir / schema.RUNTIME / schema.TRACES
    shutil.rmtree(traces, ignore_errors=True)  # a run's progress is read from its own files
    traces.mkdir(parents=True)
    shutil.rmtree(_checkpoints(traces), ignore_errors=True)  # and it rolls back to its own
    _checkpoints(traces).mkdir(mode=0o700)
    if home is None:
        home = Home(run_dir / schema.RUNTIME / "home")
        shutil.rmtree(home.root, ignore_errors=True)
    elif not isinstance(home, Home):
        home = Home(Path(home))
    project = _load(project_dir, scenario, home, traces, multilang, java_jars, storm_home)
    name = project.plan.name
    plan_file.write(project.plan, run_dir)

    started = time.time()
    deadline = time.monotonic() + scenario.timeout

    def install(resources: Path) -> None:
        project.install_resources(resources)
        _install_files(scenario, resources, name)

    try:
        launch = launcher(project, home, install) if launcher is not None else \
            Launch(project.plan, home, install=install)
    except (RuntimeKernelError, CompatError) as exc:
        msg = f"topology {name!r} on the runtime: cannot submit it: {exc}"
        raise ConformanceError(msg) from exc
    progress = Progress(traces)
    snapshot = progress.poll()
    finished = False
    hashing = seed.hash_env(scenario.seed) if scenario.seed is not None else {}
    with _environ(hashing):
        try:
            try:
                launch.start(max(1.0, deadline - time.monotonic()))
            except (RuntimeKernelError, CompatError) as exc:
                msg = f"topology {name!r} on the runtime: {exc} (logs in {launch.workdir})"
                raise ConformanceError(msg) from exc
            while time.monotonic() < deadline:
                time.sleep(POLL_SECS)
                launch.check()
                snapshot = progress.poll()
                if on_progress is not None:
                    on_progress(snapshot)
                if snapshot.done(scenario.quiet):
                    finished = True
                    break
        finally:
            crashes = _crashes(launch, project, progress.poll())
            launch.stop()
    run = RuntimeRun(name, started, time.time(), finished, snapshot, traces, launch.workdir,
                     crashes)
    if not finished:
        msg = (f"topology {name!r} on the runtime (scenario {scenario.name!r}): expected "
               f"its traces to settle (no spout message pending, {scenario.quiet:g}s "
               f"quiet) within {scenario.timeout:g}s, received: {snapshot.summary()}"
               f"{snapshot.endless()}; logs in {launch.workdir}")
        raise RuntimeTimeout(msg, run)
    return run


def _crashes(launch: Any, project: Project, snapshot: Snapshot) -> str:
    """The tasks the topology master says were restarted for no injected exit (the
    traces count those), each component's first with what it died of (and where in the
    project's src/): '' when none was."""
    try:
        report = control.metrics(launch.statemgr, launch.name, timeout=2.0)
    except RuntimeKernelError:
        return ""
    restarted = {key: n - snapshot.exited.get(key, 0)
                 for key, n in failures.restarts(report).items()}
    restarted = {key: n for key, n in restarted.items() if n > 0}
    if not restarted:
        return ""
    known = {(f.component, f.task): f for f in failures.task_failures(launch.name, report)}
    resources = str(launch.workdir / "resources")
    parts, seen = [], set()
    for (component, task), times in sorted(restarted.items()):
        if component in seen:
            continue
        seen.add(component)
        failure = known.get((component, task))
        said = "" if failure is None else f": {failure.exception}" + failure.at(
            lambda path: path.replace(resources, str(project.source), 1))
        parts.append(f"{component!r} task {task} was restarted {times} "
                     f"time{'s' if times != 1 else ''}{said}")
    return "; ".join(parts)


def _load(project_dir: str | Path, scenario: Scenario, home: Home, traces: Path,
          multilang: bool, java_jars: Path | None = None,
          storm_home: Path | None = None) -> Project:
    faults = scenario.faults_on(schema.RUNTIME)
    hook_conf = {schema.TRACE_DIR: str(traces), schema.FAULTS: faults,
                 schema.BOUND: scenario.bound(), schema.SEED: scenario.seed}
    # The health manager would rescale a bolt mid-run: the comparison needs Storm's
    # parallelism throughout (the scenario may still switch it on).
    options = {ENABLED: "off", CHECKPOINT_ROOT: str(_checkpoints(traces)),
               **scenario.storm_options(), **hook_conf}
    if not multilang:
        options[keys.HOOK] = HOOK_PATH
    try:
        name = topology_name(project_dir, scenario.topology)
        project = load_project(project_dir, name, scenario.environment, options, multilang,
                               home.workdir(name) / "resources", java_jars=java_jars)
    except (CompatError, ShimError) as exc:  # ShimError: a migrated topology's marked parts
        msg = f"scenario {scenario.name!r} on the runtime: cannot load the project: {exc}"
        raise ConformanceError(msg) from exc
    plan = project.plan
    layout = TaskLayout.of(plan)
    tasks = {c: list(ids) for c, ids in layout.component_tasks.items()}
    spouts = {c for c, spec in plan.components.items() if spec.is_spout}
    check_faults(faults, tasks, spouts, f"topology {plan.name!r} (scenario "
                 f"{scenario.name!r})")
    rebuilt = plan.config.get(RELIABILITY_MODE) == EFFECTIVELY_ONCE
    if has_java(plan):
        give_classpath(plan, project.java_jars, storm_home)
    for spec in plan.components.values():
        java_spec = spec.config.get(jvm.COMPONENT)
        if java_spec is not None:  # in the JVM task host, inside the tracing wrapper
            spec.config[jvm.COMPONENT] = java.traced(java_spec, spec.is_spout, hook_conf)
            continue
        command = spec.config.get(keys.COMMAND)
        if command is None:
            if rebuilt:  # a message hook would keep the loop a rollback must rebuild
                spec.config[keys.HOOK] = ""
                component_hook.stand_in(spec)
            continue  # in-process: the hook named by keys.HOOK traces it
        # The subprocess host runs [command, *shlex.split(script)]: streamparse's with
        # the hook inside, any other under the proxy.
        script = spec.config.get(keys.SCRIPT, "")
        argv = traced_argv(shlex.split(script), hook_conf) \
            if command == keys.STREAMPARSE_RUN else \
            proxy_argv(child_argv(command, script),
                       spec.config.get(keys.SERIALIZER, project.serializer), hook_conf)
        spec.config[keys.COMMAND] = argv[0]
        spec.config[keys.SCRIPT] = shlex.join(argv[1:])
    return project


def _checkpoints(traces: Path) -> Path:
    """Where an effectively-once run keeps its checkpoints: beside its traces."""
    return traces.parent / "checkpoints"


@contextlib.contextmanager
def _environ(values: dict[str, str]) -> Iterator[None]:
    """`values` in this process's environment while the topology runs: every process it
    starts (restarts included) inherits them."""
    before = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _install_files(scenario: Scenario, resources: Path, name: str) -> None:
    """The scenario's input files, over the project's src/ copy."""
    try:
        files = input_files(scenario.files)
    except ConformanceError as exc:
        msg = f"topology {name!r} (scenario {scenario.name!r}): {exc}"
        raise ConformanceError(msg) from exc
    for rel, source in files.items():
        target = resources / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
