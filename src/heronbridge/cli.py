"""The `heronbridge` command line."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import socket
import sys
import time
from pathlib import Path
from typing import Any

from rich.live import Live
from rich.markup import escape
from rich.table import Table

from heronbridge.runtime import control
from heronbridge.runtime.errors import RuntimeKernelError, StateManagerError
from heronbridge.runtime.loader import load_topology_file
from heronbridge.runtime.metrics_manager.sink import latest_samples
from heronbridge.runtime.plan.logical import LogicalPlan
from heronbridge.runtime.proto import topology_pb2
from heronbridge.runtime.scheduler import (
    Home,
    default_home,
    default_state,
    pid_alive,
    running_scheduler,
)
from heronbridge.runtime.scheduler.launch import Launch
from heronbridge.runtime.state import (
    PACKING_PLANS,
    PHYSICAL_PLANS,
    SCHEDULERS,
    TOPOLOGIES,
    StateManager,
)

from . import __version__
from .bench_verb import add_verb as add_bench_verb
from .conform_verbs import add_verbs as add_conformance_verbs
from .crash_watch import CrashWatch
from .errors import HeronbridgeError
from .migrate_verb import add_verb as add_migrate_verb
from .nimbus_verb import add_verb as add_nimbus_verb
from .scheduling import scheduler_options, spark_of
from .status import (
    RateLine,
    actions_table,
    drops_before,
    totals_from_report,
    totals_from_samples,
    totals_table,
)
from .terminal import console, out, parse_options
from .ui_verb import add_verb as add_ui_verb
from .ui_verb import print_ui_address
from .update_verb import add_health_option, apply_health_option
from .update_verb import add_verb as add_update_verb

KILL_WAIT_SECS = 60.0


class Prepared:
    """A plan ready to submit, and what must be in place before its tasks start."""

    def __init__(self, plan: LogicalPlan, project: Any = None) -> None:
        self.plan = plan
        self.project = project

    def install(self, resources: Path) -> None:
        """Put the project's files in the topology's resources folder (its tasks' cwd)."""
        if self.project is not None:
            self.project.install_resources(resources)

    def launch(self, home: Home, state: StateManager, **kwargs: Any) -> Launch:
        launch = Launch(self.plan, home, state, self.install, **kwargs)
        if self.project is not None:  # errors name the user's files, not the tasks' copies
            launch.sources[str(launch.workdir / "resources")] = str(self.project.source)
        return launch


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
    launch = prepared.launch(home, state, spark=spark)
    crashes = CrashWatch(launch)
    stop = []

    def on_signal(signum: int, frame: Any) -> None:
        stop.append(signum)

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    running_since = None
    at_stop = None
    try:
        with console.status(f"starting {plan.name} ({launch.containers} containers)"):
            took = launch.start(keep_waiting=lambda: not stop, on_report=crashes.see)
        running_since = time.monotonic()
        console.print(f"[bold]{plan.name}[/] running: every task registered in "
                      f"{took:.1f}s; logs in {_logs(launch)}")
        print_ui_address(home.root, plan.name)
        _watch(state, plan.name, launch, running_since, args.time, stop, crashes)
        # What the run did, before the shutdown: frames dropped while the tasks stop
        # are no fault of the run's.
        with contextlib.suppress(RuntimeKernelError):
            at_stop = control.metrics(state, plan.name)
    finally:
        elapsed = time.monotonic() - running_since if running_since is not None else 0.0
        with console.status(f"stopping {plan.name}"):
            launch.stop()
        for s, handler in old.items():
            signal.signal(s, handler)
    totals = totals_from_report(at_stop) if spark is not None and at_stop is not None \
        else totals_from_samples(latest_samples(launch.workdir))
    if at_stop is not None:
        drops_before(totals, totals_from_report(at_stop))
    out.print(totals_table(f"{plan.name}: totals over {elapsed:.1f}s", totals, elapsed))
    if at_stop is not None and (line := crashes.never_up(at_stop)):
        console.print(f"[red]error:[/] {escape(line)}", highlight=False)
    return 0


def _watch(state: StateManager, name: str, launch: Launch, since: float,
           duration: float | None, stop: list, crashes: CrashWatch) -> None:
    line = RateLine()
    live = Live(console=console, refresh_per_second=4, transient=True) \
        if console.is_terminal else None
    next_ask = 0.0
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
            if now < next_ask:
                continue
            next_ask = now + 1.0  # crashes are told within a second or two, even off a tty
            try:
                report = control.metrics(state, name, timeout=1.0)
            except RuntimeKernelError:
                continue
            crashes.see(report)
            totals = totals_from_report(report)
            if not totals or now < next_print:
                continue  # no task has published yet, or not the status line's time
            next_print = now + (1.0 if live is not None else 5.0)
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
    initial = topology_pb2.PAUSED if args.deactivated else topology_pb2.RUNNING
    launch = prepared.launch(home, state, initial_state=initial, detached=True, spark=spark)
    with console.status(f"starting {plan.name}"):
        launch.start(on_report=CrashWatch(launch).see)
    state_name = "deactivated" if args.deactivated else "running"
    on = "" if spark is None else f" on {spark.master}"
    out.print(f"submitted {plan.name} ({launch.topology_id}){on}: {state_name}; logs in "
              f"{_logs(launch)}")
    print_ui_address(home.root, plan.name)
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    state, _home = _state(args)
    table = Table(title=f"topologies in {state.uri}")
    for col in ("name", "id", "state", "containers", "tasks", "scheduler", "working dir"):
        table.add_column(col)
    names = sorted(set(state.names(TOPOLOGIES)) | set(state.names(SCHEDULERS)))
    for name in names:
        try:
            topology = state.get(TOPOLOGIES, name)
            packing = state.get(PACKING_PLANS, name)
            location = state.get(SCHEDULERS, name)
            alive = running_scheduler(state, name) is not None
            hosts = _containers(state, name, packing)
        except StateManagerError as exc:  # one bad node must not hide the others
            table.add_row(name, "-", f"CORRUPT ({exc}; `heronbridge kill {name}` removes "
                          "it)", "-", "-", "-", "-")
            continue
        status = topology_pb2.TopologyState.Name(topology.state) if topology else "UNKNOWN"
        if not alive:
            status = "DEAD (stale state; `heronbridge kill` cleans it)"
        tasks = sum(len(c.instances) for c in packing.containers) if packing else 0
        table.add_row(name, topology.id if topology else "-", status, hosts, str(tasks),
                      f"pid {location.pid} on {location.host or '?'}" if location else "-",
                      location.working_dir if location else "-")
    if not names:
        out.print(f"no topologies in {state.uri}")
    else:
        out.print(table)
        if (actions := actions_table(state, names)) is not None:
            out.print(actions)
    return 0


def _containers(state: StateManager, name: str, packing: Any) -> str:
    """One line per container: its id and the host its stream manager listens on."""
    if packing is None:
        return "-"
    pplan = state.get(PHYSICAL_PLANS, name)
    hosts = {s.container: s.host for s in pplan.stmgrs} if pplan is not None else {}
    return "\n".join(f"{c.id} on {hosts.get(c.id, '(starting)')}" for c in packing.containers)


def cmd_kill(args: argparse.Namespace) -> int:
    state, _home = _state(args)
    name = args.topology_name
    try:
        location = running_scheduler(state, name)
    except StateManagerError as exc:  # no scheduler to ask: its executors stop when the
        state.clear(name)  # topology's node goes
        out.print(f"{name}: its state was corrupt ({exc}); removed it")
        return 0
    if location is None:
        if name not in state.names(TOPOLOGIES) and name not in state.names(SCHEDULERS):
            msg = f"topology {name!r} is not running"
            raise HeronbridgeError(msg)
        state.clear(name)
        out.print(f"{name}: was not running; removed its stale state")
        return 0
    # Through the state, from any host: the scheduler, wherever it runs, follows its
    # topology's node; once it is gone it stops the containers and clears the rest.
    state.delete(TOPOLOGIES, name)
    here = location.host in ("", socket.gethostname())

    def gone() -> bool:
        return state.get(SCHEDULERS, name) is None and not (here and pid_alive(location.pid))

    with console.status(f"killing {name}"):
        if not _wait(gone, 15.0 if here else KILL_WAIT_SECS) and here \
                and pid_alive(location.pid):
            os.kill(location.pid, signal.SIGTERM)  # a scheduler that does not follow it
            _wait(gone, KILL_WAIT_SECS)
    if not gone():
        msg = (f"topology {name!r}: its scheduler (pid {location.pid} on "
               f"{location.host or 'this host'}) did not stop within {KILL_WAIT_SECS:.0f}s")
        raise HeronbridgeError(msg)
    state.clear(name)
    out.print(f"killed {name}")
    return 0


def _wait(condition: Any, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def _set_state(args: argparse.Namespace, running: bool) -> int:
    state, _home = _state(args)
    if running_scheduler(state, args.topology_name) is None:
        msg = f"topology {args.topology_name!r} is not running"
        raise HeronbridgeError(msg)
    new = control.set_state(state, args.topology_name, running)
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
