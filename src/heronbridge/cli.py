"""The `heronbridge` command line."""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import time
from pathlib import Path
from typing import Any

from rich.live import Live
from rich.markup import escape
from rich.table import Table

from heronbridge.runtime import admin, control
from heronbridge.runtime.errors import RuntimeKernelError
from heronbridge.runtime.loader import load_topology_file
from heronbridge.runtime.metrics_manager.sink import latest_samples
from heronbridge.runtime.plan.logical import LogicalPlan
from heronbridge.runtime.proto import topology_pb2
from heronbridge.runtime.scheduler import (
    Home,
    default_home,
    default_state,
)
from heronbridge.runtime.scheduler.launch import Launch
from heronbridge.runtime.state import (
    StateManager,
)

from . import __version__
from .bench_verb import add_verb as add_bench_verb
from .conform_verbs import add_verbs as add_conformance_verbs
from .errors import HeronbridgeError
from .migrate_verb import add_verb as add_migrate_verb
from .nimbus_verb import add_verb as add_nimbus_verb
from .scheduling import scheduler_options, spark_of
from .status import (
    RateLine,
    actions_table,
    totals_from_report,
    totals_from_samples,
    totals_table,
)
from .terminal import console, out, parse_options
from .ui_verb import add_verb as add_ui_verb
from .ui_verb import print_ui_address
from .update_verb import add_health_option, apply_health_option
from .update_verb import add_verb as add_update_verb


class Prepared:
    """A plan ready to submit, and what must be in place before its tasks start."""

    def __init__(self, plan: LogicalPlan, project: Any = None) -> None:
        self.plan = plan
        self.project = project

    def install(self, resources: Path) -> None:
        """Put the project's files in the topology's resources folder (its tasks' cwd)."""
        if self.project is not None:
            self.project.install_resources(resources)


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
        project = load_project(project_dir, name, args.environment, options, args.multilang,
                               home.workdir(name) / "resources")
        prepared = Prepared(project.plan, project)
    if args.containers:
        prepared.plan.config["topology.stmgrs"] = args.containers
    apply_health_option(args, prepared.plan)
    prepared.plan.validate()
    return prepared


def _state(args: argparse.Namespace) -> tuple[StateManager, Home]:
    home = Home(Path(args.home), args.state)
    return home.open_state(), home


# -- verbs ------------------------------------------------------------------------


def cmd_run(args: argparse.Namespace) -> int:
    spark = spark_of(args)
    state, home = _state(args)
    prepared = load_plan(args, home)
    plan = prepared.plan
    launch = Launch(plan, home, state, prepared.install, spark=spark)
    stop = []

    def on_signal(signum: int, frame: Any) -> None:
        stop.append(signum)

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    running_since = None
    report = None
    try:
        with console.status(f"starting {plan.name} ({launch.containers} containers)"):
            took = launch.start(keep_waiting=lambda: not stop)
        running_since = time.monotonic()
        console.print(f"[bold]{plan.name}[/] running: every task registered in "
                      f"{took:.1f}s; logs in {_logs(launch)}")
        print_ui_address(home.root, plan.name)
        _watch(state, plan.name, launch, running_since, args.time, stop)
        if spark is not None:  # the metrics files are on the workers: ask the master
            with contextlib.suppress(RuntimeKernelError):
                report = control.metrics(state, plan.name)
    finally:
        elapsed = time.monotonic() - running_since if running_since is not None else 0.0
        with console.status(f"stopping {plan.name}"):
            launch.stop()
        for s, handler in old.items():
            signal.signal(s, handler)
    totals = totals_from_report(report) if spark is not None and report is not None \
        else totals_from_samples(latest_samples(launch.workdir))
    out.print(totals_table(f"{plan.name}: totals over {elapsed:.1f}s", totals, elapsed))
    return 0


def _watch(state: StateManager, name: str, launch: Launch, since: float,
           duration: float | None, stop: list) -> None:
    line = RateLine()
    live = Live(console=console, refresh_per_second=4, transient=True) \
        if console.is_terminal else None
    next_print = 0.0 if live is not None else time.monotonic() + 5.0
    if live is not None:
        live.start()
    try:
        while not stop and not launch.was_killed() and (
                duration is None or time.monotonic() - since < duration):
            time.sleep(0.25 if duration is None else min(0.25, max(0.0, duration - (
                time.monotonic() - since))))
            launch.check()
            now = time.monotonic()
            if now < next_print:
                continue
            next_print = now + (1.0 if live is not None else 5.0)
            try:
                report = control.metrics(state, name, timeout=1.0)
            except RuntimeKernelError:
                continue
            totals = totals_from_report(report)
            if not totals:
                continue  # no task has published yet
            text = line.render(name, now - since, now, totals)
            if live is not None:
                live.update(text)
            else:
                console.print(text)
    finally:
        if live is not None:
            live.stop()


def _logs(launch: Launch) -> str:
    if launch.spark is None:
        return str(launch.workdir)
    return (f"{launch.scheduler_log if launch.detached else launch.workdir} (the scheduler) "
            f"and, on each Spark worker, heronbridge/{launch.name}/container-N/ in the "
            "application's executor folder")


def cmd_submit(args: argparse.Namespace) -> int:
    spark = spark_of(args)
    state, home = _state(args)
    prepared = load_plan(args, home)
    plan = prepared.plan
    with console.status(f"starting {plan.name}"):
        submitted = admin.submit(state, home, plan, prepared.install, not args.deactivated,
                                 spark)
    state_name = "deactivated" if args.deactivated else "running"
    on = "" if spark is None else f" on {spark.master}"
    out.print(f"submitted {plan.name} ({submitted.topology_id}){on}: {state_name}; logs in "
              f"{_logs(submitted.launch)}")
    print_ui_address(home.root, plan.name)
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    state, _home = _state(args)
    table = Table(title=f"topologies in {state.uri}")
    for col in ("name", "id", "state", "containers", "tasks", "scheduler", "working dir"):
        table.add_column(col)
    topologies = admin.list_topologies(state)
    for t in topologies:
        if t.corrupt is not None:
            table.add_row(t.name, "-", f"CORRUPT ({t.corrupt}; `heronbridge kill {t.name}` "
                          "removes it)", "-", "-", "-", "-")
            continue
        status = t.state if t.alive else "DEAD (stale state; `heronbridge kill` cleans it)"
        hosts = "\n".join(f"{c.id} on {c.host or '(starting)'}" for c in t.containers) or "-"
        table.add_row(t.name, t.id or "-", status, hosts, str(t.tasks),
                      f"pid {t.scheduler_pid} on {t.scheduler_host or '?'}"
                      if t.scheduler_pid is not None else "-", t.working_dir or "-")
    if not topologies:
        out.print(f"no topologies in {state.uri}")
    else:
        out.print(table)
        if (actions := actions_table(state, [t.name for t in topologies])) is not None:
            out.print(actions)
    return 0


def cmd_kill(args: argparse.Namespace) -> int:
    state, _home = _state(args)
    name = args.topology_name
    with console.status(f"killing {name}"):
        killed = admin.kill(state, name)
    if killed.outcome == "corrupt":
        out.print(f"{name}: its state was corrupt ({killed.detail}); removed it")
    elif killed.outcome == "stale":
        out.print(f"{name}: was not running; removed its stale state")
    else:
        out.print(f"killed {name}")
    return 0


def _set_state(args: argparse.Namespace, running: bool) -> int:
    state, _home = _state(args)
    new = (admin.activate if running else admin.deactivate)(state, args.topology_name)
    out.print(f"{args.topology_name}: {topology_pb2.TopologyState.Name(new)}")
    return 0


def cmd_activate(args: argparse.Namespace) -> int:
    return _set_state(args, True)


def cmd_deactivate(args: argparse.Namespace) -> int:
    return _set_state(args, False)


# -- parser -----------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="heronbridge",
        description="Run Storm-era Python topologies (streamparse projects, unchanged) on a "
                    "Heron-architecture runtime.")
    parser.add_argument("--version", action="version", version=f"heronbridge {__version__}")
    home = argparse.ArgumentParser(add_help=False)
    home.add_argument("--home", default=str(default_home()),
                      help="where topologies keep state and logs [env: HERONBRIDGE_HOME] "
                           "(default: %(default)s)")
    state = argparse.ArgumentParser(add_help=False)
    state.add_argument("--state", metavar="URI", default=default_state(),
                       help="the state manager: zk://HOST:PORT[,HOST:PORT]/ROOT for "
                            "ZooKeeper [env: HERONBRIDGE_STATE] (default: the home's state/ "
                            "folder)")
    topo = argparse.ArgumentParser(add_help=False)
    topo.add_argument("topology", nargs="?", metavar="FILE",
                      help="a Python file defining a TopologyBuilder; without it, the "
                           "streamparse project in --project or the current folder")
    topo.add_argument("--project", metavar="PATH",
                      help="a streamparse project folder (the one holding config.json)")
    topo.add_argument("-n", "--name", help="which topology (streamparse: topologies/NAME.py)")
    topo.add_argument("-e", "--environment",
                      help="the config.json environment whose options apply (streamparse)")
    topo.add_argument("-o", "--option", action="append", metavar="KEY=VALUE",
                      help="set a topology config key, seen by the components too "
                           "(value read as JSON if it parses)")
    topo.add_argument("--multilang", action="store_true",
                      help="run Python components as subprocesses speaking Storm's multilang "
                           "protocol, byte for byte as under Storm (streamparse)")
    topo.add_argument("--containers", type=int,
                      help="number of containers (stream managers); topology.stmgrs")
    add_health_option(topo)
    named = argparse.ArgumentParser(add_help=False)
    named.add_argument("topology_name", help="name of a submitted topology")

    verbs = parser.add_subparsers(dest="verb", metavar="VERB", required=True)
    scheduler = scheduler_options()
    run = verbs.add_parser("run", parents=[topo, home, state, scheduler],
                           help="run a topology in the foreground, then print totals",
                           description="Run a topology on this machine with a live status "
                                       "line; stop after -t seconds or on Ctrl-C and print "
                                       "per-component totals.")
    run.add_argument("-t", "--time", type=float, help="seconds to run (default: until Ctrl-C)")
    submit = verbs.add_parser("submit", parents=[topo, home, state, scheduler],
                              help="start a topology in the background",
                              description="Start a topology that keeps running in the "
                                          "background, on this machine or a Spark cluster.")
    submit.add_argument("--deactivated", action="store_true",
                        help="start with spouts paused (activate later)")
    submit.set_defaults(func=cmd_submit)
    run.set_defaults(func=cmd_run)
    lister = verbs.add_parser("list", parents=[home, state], help="list topologies on this machine",
                              description="List submitted topologies and their state.")
    lister.set_defaults(func=cmd_list)
    for verb, func, text in (("kill", cmd_kill, "stop a topology and remove its state"),
                             ("activate", cmd_activate, "resume a topology's spouts"),
                             ("deactivate", cmd_deactivate, "pause a topology's spouts")):
        p = verbs.add_parser(verb, parents=[named, home, state], help=text, description=text + ".")
        p.set_defaults(func=func)
    add_update_verb(verbs, [named, home, state])
    add_migrate_verb(verbs)
    add_conformance_verbs(verbs, home)
    add_bench_verb(verbs, [home])
    add_ui_verb(verbs, [home, state])
    add_nimbus_verb(verbs, [home, state, scheduler])
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except HeronbridgeError as exc:
        console.print(f"[red]error:[/] {escape(str(exc))}", highlight=False)
        return 1


if __name__ == "__main__":
    sys.exit(main())
