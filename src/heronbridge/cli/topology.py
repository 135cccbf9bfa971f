"""Which topology a command names, loaded as a plan ready to submit, and the home and
state manager it runs against."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from heronbridge.runtime.loader import load_topology_file
from heronbridge.runtime.plan.logical import LogicalPlan
from heronbridge.runtime.scheduler import Home
from heronbridge.runtime.statemgr import StateManager

from ..errors import HeronbridgeError
from .options import apply_health_option
from .terminal import console, parse_options


class Prepared:
    """A plan ready to submit, and what must be in place before its tasks start."""

    def __init__(self, plan: LogicalPlan, project: Any = None) -> None:
        self.plan = plan
        self.project = project

    def install(self, resources: Path) -> None:
        """Put the project's files in the topology's resources folder (its tasks' cwd)."""
        if self.project is not None:
            self.project.install_resources(resources)

    def sources(self, home: Home) -> dict[str, str]:
        """Where the tasks' copies of the user's files came from, so that errors name the
        user's files: {copy folder: source}."""
        if self.project is None:
            return {}
        return {str(home.workdir(self.plan.name) / "resources"): str(self.project.source)}


def load_plan(args: argparse.Namespace, home: Home) -> Prepared:
    """The topology a command names: a Python file (a heronpy Topology or TopologyBuilder
    if it imports heronpy, else a runtime topology), or a project in streamparse's layout
    (--project, or the current folder) whose topology is streamparse or heronpy."""
    options = parse_options(args.option)
    if args.topology and args.topology.endswith(".py"):
        if args.project or args.environment or args.multilang:
            msg = "--project, -e and --multilang apply to projects, not to FILE"
            raise HeronbridgeError(msg)
        from heronbridge.compat.heronpy.loader import imports_heronpy

        if imports_heronpy(Path(args.topology)):
            from heronbridge.compat.heronpy.loader import load_file

            plan = load_file(args.topology, args.name, options)
        else:
            plan = load_topology_file(args.topology, args.name)
            plan.config.update(options)
        prepared = Prepared(plan)
    else:
        from heronbridge.compat.projects import load_project, topology_name

        project_dir = args.project or args.topology or "."
        name = topology_name(project_dir, args.name)
        python = task_python(project_dir, name, args, options, home)
        project = load_project(project_dir, name, args.environment, options, args.multilang,
                               home.workdir(name) / "resources", python)
        prepared = Prepared(project.plan, project)
    if args.containers:
        prepared.plan.config["topology.stmgrs"] = args.containers
    apply_health_option(args, prepared.plan)
    prepared.plan.validate()
    return prepared


def task_python(project_dir: str, name: str, args: argparse.Namespace,
                options: dict[str, Any], home: Home) -> str | None:
    """The interpreter of a streamparse topology's own virtualenv (built or reused here,
    saying so), or None: its tasks run with heronbridge's."""
    from heronbridge.compat import virtualenvs
    from heronbridge.compat.heronpy.loader import imports_heronpy
    from heronbridge.compat.streamparse import read_project

    files = read_project(project_dir, name, args.environment)
    if imports_heronpy(files.topology_file):
        return None
    home.ensure()
    return virtualenvs.prepare(files, home.root, options, _progress,
                               getattr(args, "rebuild_virtualenv", False)).python


def _progress(line: str) -> None:
    console.print(line, markup=False, highlight=False)


def open_home(args: argparse.Namespace) -> tuple[StateManager, Home]:
    home = Home(Path(args.home), args.state)
    return home.open_statemgr(), home


# -- verbs ------------------------------------------------------------------------
