"""Which topology a command names, loaded as a plan ready to submit, and the home and
state manager it runs against."""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from heronbridge.compat.java import check_classes, has_java, project_jars
from heronbridge.runtime.loader import load_topology_file
from heronbridge.runtime.plan.logical import LogicalPlan
from heronbridge.runtime.scheduler import Home
from heronbridge.runtime.statemgr import StateManager

from ..errors import HeronbridgeError
from .options import apply_health_option
from .terminal import console, parse_options

if TYPE_CHECKING:
    from heronbridge.compat.streamparse import ProjectFiles


class Prepared:
    """A plan ready to submit, and what must be in place before its tasks start."""

    def __init__(self, plan: LogicalPlan, project: Any = None,
                 files: ProjectFiles | None = None) -> None:
        self.plan = plan
        self.project = project
        self.files = files  # a streamparse project's config.json, topology and virtualenv

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
    if getattr(args, "jar", None) or getattr(args, "flux", None):
        prepared = _load_jar(args, home, options)
    elif args.topology and args.topology.endswith(".py"):
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
        python, files = task_python(project_dir, name, args, options, home)
        project = load_project(project_dir, name, args.environment, options, args.multilang,
                               home.workdir(name) / "resources", python,
                               Path(args.java_jars) if args.java_jars else None)
        prepared = Prepared(project.plan, project, files)
    if has_java(prepared.plan):
        from heronbridge.jvm.storm import give_classpath

        given = Path(args.java_jars) if getattr(args, "java_jars", None) else None
        jars = prepared.project.java_jars if prepared.project is not None else \
            project_jars(None, given)
        give_classpath(prepared.plan, jars, home.root, _progress)
        check_classes(prepared.plan, jars, getattr(prepared.project, "root", None), given)
    if args.containers:
        prepared.plan.config["topology.stmgrs"] = args.containers
    apply_health_option(args, prepared.plan)
    prepared.plan.validate()
    return prepared


class JarPrepared(Prepared):
    """A topology a jar's main class submitted, its resources in `staging` until then."""

    def __init__(self, plan: LogicalPlan, staging: Path) -> None:
        super().__init__(plan)
        self.staging = staging

    def install(self, resources: Path) -> None:
        shutil.move(self.staging, resources)


def _load_jar(args: argparse.Namespace, home: Home, options: dict[str, Any]) -> Prepared:
    """`run --jar JAR --class MAIN`: what MAIN submits through StormSubmitter, planned as
    `heronbridge nimbus` plans it; `run --flux YAML [--jar JAR]`: the same with Storm's
    Flux as MAIN (`--remote YAML`), a jar of no classes when none is given."""
    flux = getattr(args, "flux", None)
    if args.topology or args.project or args.environment or args.multilang or \
            args.java_jars or bool(flux) == bool(args.main_class):
        msg = ("--jar takes --class (its main class) and --arg, --flux takes --jar (optional) "
               "and --arg, and neither takes FILE, --project, -e, --multilang or --java-jars")
        raise HeronbridgeError(msg)
    from heronbridge.jvm.storm import find_java, flux_jar, give_classpath, storm_jars
    from heronbridge.nimbus.main_class import FLUX_MAIN, empty_jar, submission_of_main
    from heronbridge.nimbus.topology import plan_of_upload

    home.ensure()
    made = Path(tempfile.mkdtemp(prefix="jar-", dir=home.root))
    try:
        jar = Path(args.jar).resolve() if args.jar else empty_jar(made / "flux.jar")
        main, main_args, extra = args.main_class, args.main_args, []
        if flux:
            main, extra = FLUX_MAIN, [flux_jar(home.root, _progress)]
            main_args = ["--remote", "--no-splash", str(Path(flux).resolve()), *main_args]
        statemgr = home.open_statemgr()
        try:
            with console.status(f"running {main} as `storm jar` runs it"):
                submission = submission_of_main(home, statemgr, find_java(),
                                                [*storm_jars(home.root, _progress), *extra],
                                                jar, main, main_args)
        finally:
            statemgr.close()
        staging = Path(tempfile.mkdtemp(prefix=f"{submission.name}-", dir=home.root))
        try:
            plan = plan_of_upload(submission.name, jar, {**submission.conf, **options},
                                  submission.topology, home.workdir(submission.name), staging,
                                  lambda plan, jars: give_classpath(plan, [*jars, *extra],
                                                                    home.root, _progress))
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    finally:
        shutil.rmtree(made, ignore_errors=True)
    return JarPrepared(plan, staging)


def task_python(project_dir: str, name: str, args: argparse.Namespace,
                options: dict[str, Any], home: Home) -> tuple[str | None, ProjectFiles | None]:
    """The interpreter of a project's own virtualenv (built or reused here, saying so),
    or None: its tasks run with heronbridge's; and the project's files. A project migrated
    to heronpy keeps its virtualenvs/NAME.txt, and its tasks their dependencies."""
    from heronbridge.compat import virtualenvs
    from heronbridge.compat.streamparse import read_project

    files = read_project(project_dir, name, args.environment)
    home.ensure()
    python = virtualenvs.prepare(files, home.root, options, _progress,
                                 getattr(args, "rebuild_virtualenv", False)).python
    return python, files


def _progress(line: str) -> None:
    console.print(line, markup=False, highlight=False)


def open_home(args: argparse.Namespace) -> tuple[StateManager, Home]:
    home = Home(Path(args.home), args.state)
    return home.open_statemgr(), home


# -- verbs ------------------------------------------------------------------------
