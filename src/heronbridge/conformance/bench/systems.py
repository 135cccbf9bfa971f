"""Starting and stopping one topology on each system, with the probe on every Python
component: Storm's local mode (the conformance suite's launcher) and the runtime."""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path
from typing import Any

from heronbridge.compat.streamparse import STREAMPARSE_RUN, Project, load_project, topology_name

from . import BenchError
from .probe import DIR_OPTION, HOOK_PATH
from .probe_run import MODULE as PROBE_RUN


def with_bolt_parallelism(plan: Any, par: int | None) -> Any:
    if par is None:
        return plan
    return dataclasses.replace(plan, components={
        n: s if s.is_spout else dataclasses.replace(s, parallelism=par)
        for n, s in plan.components.items()})


class StormSystem:
    name = "storm"

    def __init__(self, settings: Any, run_dir: Path, probes: Path) -> None:
        self.settings, self.run_dir, self.probes = settings, run_dir, probes
        self.storm: Any = None
        self.log: Path | None = None

    def start(self) -> None:
        from heronbridge.conformance.scenario import Scenario
        from heronbridge.conformance.storm import fetch
        from heronbridge.conformance.storm.flux import flux_topology, write_flux
        from heronbridge.conformance.storm.local_storm import LocalStorm, storm_command
        from heronbridge.conformance.storm.resources_jar import build_resources_jar

        s = self.settings
        base = self.run_dir / self.name
        base.mkdir(parents=True, exist_ok=True)
        options = {**s.options, DIR_OPTION: str(self.probes)}
        project = load_project(s.project, s.topology, s.environment, options, False,
                               base / "resources")
        install = fetch(s.home)
        scenario = Scenario(name=f"bench-{project.name}", project=Path(s.project))
        flux = flux_topology(project, scenario, base / "traces", trace=False)
        for component in [*flux.get("spouts", []), *flux.get("bolts", [])]:
            argv = component.get("constructorArgs", [[]])[0]
            if argv and argv[0] == STREAMPARSE_RUN:
                component["constructorArgs"][0] = [sys.executable, "-m", PROBE_RUN, *argv[1:]]
            if s.par is not None and component in flux.get("bolts", []):
                component["parallelism"] = s.par
        jar = build_resources_jar(project.source, {}, base / "topology-resources.jar")
        tmp = base / "tmp"
        tmp.mkdir(exist_ok=True)
        command = storm_command(install.java, install.classpath, jar,
                                write_flux(flux, base / "topology.yaml"), 3600, tmp)
        env = dict(os.environ)
        env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
        self.log = base / "java.log"
        self.storm = LocalStorm(command, self.log, env, base)
        self.storm.start()

    def check(self) -> None:
        code = self.storm.exit_code()
        if code is not None:
            msg = f"Storm's JVM exited with code {code} during the run (log: {self.log})"
            raise BenchError(msg)

    def stop(self) -> None:
        if self.storm is not None:
            self.storm.stop()


class RuntimeSystem:
    name = "runtime"

    def __init__(self, settings: Any, run_dir: Path, probes: Path) -> None:
        self.settings, self.run_dir, self.probes = settings, run_dir, probes
        self.launch: Any = None

    def start(self) -> None:
        from heronbridge.runtime.scheduler import Home
        from heronbridge.runtime.scheduler.launch import Launch
        from heronbridge.shims.storm import keys

        s = self.settings
        home = Home(self.run_dir / self.name / "home")
        options = {**s.options, DIR_OPTION: str(self.probes), keys.HOOK: HOOK_PATH}
        name = topology_name(s.project, s.topology)
        project: Project = load_project(s.project, s.topology, s.environment, options, False,
                                        home.workdir(name) / "resources")
        self.launch = Launch(with_bolt_parallelism(project.plan, s.par), home,
                             install=project.install_resources)
        self.launch.start(timeout=120)

    def check(self) -> None:
        restarted = self.launch.check()
        if restarted:
            msg = (f"the runtime restarted containers {restarted} during the run (logs in "
                   f"{self.launch.workdir})")
            raise BenchError(msg)

    def stop(self) -> None:
        if self.launch is not None:
            self.launch.stop()
