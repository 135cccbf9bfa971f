"""One run of a streamparse project on Apache Storm's local mode, under the tracing hook.

Files, under `<run dir>/storm/`: `topology-resources.jar` (src/ and the scenario's input
files), `topology.yaml` (the Flux topology), `java.log` (the JVM's output), `traces/`
(one trace file per task process), `tmp/` (Storm's own folders, removed afterwards).
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from heronbridge.compat.java import has_java
from heronbridge.jvm.host import host_jar

from ..scenario import Scenario
from ..trace import seed
from ..trace.progress import Progress, Snapshot
from .errors import StormError
from .flux import flux_topology, write_flux
from .install import StormInstall, fetch
from .local_storm import LocalStorm, storm_command
from .log_watch import LogWatch
from .resources_jar import build_resources_jar
from .traps import (
    COMPONENT_DIED,
    NOT_STARTED,
    PYTHON_EXCEPTION,
    WORKER_DIED,
    Trap,
    diagnose,
    injected_exit,
)

POLL = 0.5  # seconds between looks at the traces, the log and the JVM
FATAL_GRACE = 1.5  # after a fatal log line, time for the JVM to log the rest and halt
# LocalCluster shuts down on its own after storm.local.sleeptime; we stop it first.
SLEEP_MARGIN = 300
# With a kill at the end: time beyond its wait for Nimbus to remove the topology and for
# local mode to stop.
KILL_MARGIN = 60.0
DEATHS = {COMPONENT_DIED, WORKER_DIED, PYTHON_EXCEPTION, NOT_STARTED}


@dataclass
class StormRun:
    started: float  # wall clock (time.time()) when the JVM was started
    ended: float  # ... and when it and all its processes were gone
    finished: bool  # the traces say the topology is done
    snapshot: Snapshot  # the traces at the end
    java_log: Path
    flux: Path
    explanation: str = ""  # why the run did not finish, when it did not
    trap: Trap | None = None  # what the log says went wrong, when it says
    exit_code: int | None = None  # the JVM's, when it ended on its own
    killed: bool = False  # the run ended by killing the topology (run_on_storm's kill_wait)


def storm_dir(run_dir: Path) -> Path:
    return Path(run_dir) / "storm"


def run_on_storm(project: Any, scenario: Scenario, run_dir: Path, *,
                 install: StormInstall | None = None,
                 on_progress: Callable[[Snapshot], None] | None = None,
                 kill_wait: int | None = None) -> StormRun:
    """Run `project` (compat.streamparse.Project, loaded with the scenario's options) on
    Storm until its traces say it is done, the scenario's timeout passes, or Storm fails.

    With `kill_wait` (seconds), a finished run ends as `storm kill -w kill_wait` ends a
    topology: Storm deactivates its spouts (a multilang spout hears "deactivate"), waits,
    then removes it; only then does local mode stop. Without, local mode is stopped under
    the running topology, which hears nothing."""
    install = install or fetch()
    base = storm_dir(run_dir)
    traces, tmp, java_log = base / "traces", base / "tmp", base / "java.log"
    for stale in (traces, tmp):
        shutil.rmtree(stale, ignore_errors=True)
    traces.mkdir(parents=True)
    tmp.mkdir()
    jar = build_resources_jar(project.source, scenario.files, base / "topology-resources.jar")
    flux = write_flux(flux_topology(project, scenario, traces), base / "topology.yaml")
    classpath = list(install.classpath)
    if has_java(project.plan):
        # the tracing wrappers (the host's jar) and the project's Java code
        classpath += [host_jar(), *project.java_jars]
    command = storm_command(install.java, classpath, jar, flux,
                            int(scenario.timeout) + SLEEP_MARGIN, tmp, kill_wait)
    env = dict(os.environ)
    # Storm starts `streamparse_run` (and `python`) by name: this interpreter's first.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    if scenario.seed is not None:
        env.update(seed.hash_env(scenario.seed))

    progress = Progress(traces)
    watch = LogWatch(java_log)
    storm = LocalStorm(command, java_log, env, base)
    started = time.time()
    deadline = time.monotonic() + scenario.timeout
    finished, fatal, exit_code, kill_error = False, None, None, ""
    try:
        storm.start()
        while True:
            snapshot = progress.poll()
            if on_progress is not None:
                on_progress(snapshot)
            fatal = watch.poll()
            if fatal is not None:
                _grace(storm)
                break
            exit_code = storm.exit_code()
            if exit_code is not None:
                break
            if snapshot.done(scenario.quiet):
                finished = True
                break
            if time.monotonic() >= deadline:
                break
            time.sleep(POLL)
        if finished and kill_wait is not None:
            kill_error = storm.kill_topology(kill_wait + KILL_MARGIN)
    finally:
        # What Storm logs while being stopped (children gone, pipes broken) is not news.
        cut = _size(java_log)
        code = storm.stop()
        exit_code = exit_code if exit_code is not None else code
        ended = time.time()
        shutil.rmtree(tmp, ignore_errors=True)
    if kill_error:
        msg = f"topology {project.name!r} on Storm: {kill_error} (log: {java_log})"
        raise StormError(msg)
    snapshot = progress.poll()
    run = StormRun(started, ended, finished, snapshot, java_log, flux, exit_code=exit_code,
                   killed=finished and kill_wait is not None)
    if not finished:
        trap = diagnose(_read(java_log, cut), exit_code, install.version)
        exits = progress.exits()
        if exits and trap is not None and trap.kind in DEATHS:
            trap = injected_exit(exits, trap)
        run.trap = trap
        run.explanation = _explain(project.name, scenario, trap, fatal, exit_code, snapshot,
                                   java_log)
    return run


def _grace(storm: LocalStorm) -> None:
    end = time.monotonic() + FATAL_GRACE
    while storm.exit_code() is None and time.monotonic() < end:
        time.sleep(0.1)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _read(path: Path, size: int = -1) -> str:
    try:
        with path.open("rb") as f:
            return f.read(size).decode(errors="replace")
    except OSError:
        return ""


def _explain(topology: str, scenario: Scenario, trap: Trap | None, fatal: str | None,
             exit_code: int | None, snapshot: Snapshot, java_log: Path) -> str:
    where = f"topology {topology!r} on Storm"
    if trap is not None:
        return f"{where}: {trap.explanation} (log: {java_log})"
    if fatal is not None:
        return f"{where}: Storm logged a fatal error: {fatal.strip()} (log: {java_log})"
    if exit_code is not None:
        return (f"{where}: the JVM exited with code {exit_code} before the topology was "
                f"done; {snapshot.summary()} (log: {java_log})")
    return (f"{where}: expected the traces to show the topology done (nothing pending, "
            f"quiet for {scenario.quiet:g}s) within {scenario.timeout:g}s, received "
            f"{snapshot.summary()}{snapshot.endless()} (log: {java_log})")
