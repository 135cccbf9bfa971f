"""`heronbridge run`: a topology in the foreground with a live status line, then totals."""

from __future__ import annotations

import argparse
import contextlib
import signal
import time
from typing import Any

from rich.live import Live
from rich.markup import escape

from heronbridge.runtime import control, failures
from heronbridge.runtime.config import TopologyConfig
from heronbridge.runtime.errors import RuntimeKernelError
from heronbridge.runtime.metrics_manager.sink import latest_samples
from heronbridge.runtime.plan.logical import LogicalPlan
from heronbridge.runtime.scheduler.launch import Launch
from heronbridge.runtime.statemgr import StateManager

from . import exit_codes
from .crash_watch import CrashWatch
from .options import Parents, spark_of
from .starting import StartProgress
from .status import (
    RateLine,
    drops_before,
    totals_from_report,
    totals_from_samples,
    totals_table,
)
from .terminal import console, out
from .topology import load_plan, open_home
from .ui import print_ui_address


def add_verb(verbs: Any, parents: Parents) -> None:
    run = verbs.add_parser("run", parents=[parents.topology, parents.home, parents.state,
                                           parents.scheduler],
                           help="run a topology in the foreground, then print totals",
                           description="Run a topology on this machine with a live status "
                                       "line; stop after -t seconds or on Ctrl-C and print\n"
                                       "per-component totals.",
                           formatter_class=argparse.RawDescriptionHelpFormatter,
                           epilog=exit_codes.epilog("run"))
    run.add_argument("-t", "--time", type=float, help="seconds to run (default: until Ctrl-C)")
    run.add_argument("--jar", metavar="JAR",
                     help="a Storm topology jar: its --class main is run as `storm jar` runs "
                          "it, and the topology it submits with StormSubmitter runs here")
    run.add_argument("--class", dest="main_class", metavar="CLASS",
                     help="the main class of --jar")
    run.add_argument("--arg", dest="main_args", action="append", default=[], metavar="ARG",
                     help="an argument of --class's main (repeat for each, in order)")
    run.add_argument("--flux", metavar="YAML",
                     help="a Flux topology file, built by Storm's Flux as `storm jar JAR "
                          "org.apache.storm.flux.Flux --remote YAML` builds it; its classes "
                          "from --jar (optional) and Storm's jars; --arg adds Flux options "
                          "(--arg=--env-filter, --arg=--filter --arg=FILE)")
    run.set_defaults(func=cmd_run)


def cmd_run(args: argparse.Namespace) -> int:
    spark = spark_of(args)
    statemgr, home = open_home(args)
    prepared = load_plan(args, home)
    plan = prepared.plan
    launch = Launch(plan, home, statemgr, prepared.install, spark=spark)
    launch.sources.update(prepared.sources(home))
    crashes = CrashWatch(launch, prepared.files)
    stop = []

    def on_signal(signum: int, frame: Any) -> None:
        stop.append(signum)

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    running_since = None
    at_stop = None
    try:
        with console.status(f"starting {plan.name} ({launch.containers} containers)") as status:
            progress = StartProgress(plan, status, console.is_terminal)

            def keep_waiting() -> bool:
                progress.tick()
                return not stop

            def starting(report: Any) -> None:
                crashes.see(report)
                progress.see(report)

            took = launch.start(keep_waiting=keep_waiting, on_report=starting)
        for s in old:  # the Spark scheduler's SparkContext installs a SIGINT handler of its own
            signal.signal(s, on_signal)
        running_since = time.monotonic()
        console.print(f"[bold]{plan.name}[/] running: every task registered in "
                      f"{took:.1f}s; logs in {logs_of(launch)}")
        print_ui_address(home.root, plan.name)
        _watch(statemgr, plan.name, launch, running_since, args.time, stop, crashes)
        # What the run did, before the shutdown: frames dropped while the tasks stop
        # are no fault of the run's.
        with contextlib.suppress(RuntimeKernelError):
            at_stop = _report_at_stop(statemgr, plan)
        if at_stop is not None:  # a run that ended (-t) before the task died three times
            launch.refuse_start_failure(at_stop, deaths=1)
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
    line = crashes.never_up(at_stop if at_stop is not None else crashes.last)
    if line:
        console.print(f"[red]error:[/] {escape(line)}", highlight=False)
        return exit_codes.TOPOLOGY_FAILED
    return exit_codes.OK


def _report_at_stop(statemgr: StateManager, plan: LogicalPlan) -> Any:
    """The master's last report of the run. Where a task crashed once, up to three
    metrics intervals (a task's, then its metrics manager's) more for its restart's first
    sample, without which a restart that ran on would be told as one that never came up."""
    interval = TopologyConfig.read(plan.config, plan.name).metrics_interval_secs
    deadline = time.monotonic() + 3 * interval + 1
    report = control.metrics(statemgr, plan.name)
    while failures.restarting(report) and time.monotonic() < deadline:
        time.sleep(0.2)
        report = control.metrics(statemgr, plan.name)
    return report


def _watch(statemgr: StateManager, name: str, launch: Launch, since: float,
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
                report = control.metrics(statemgr, name, timeout=1.0)
            except RuntimeKernelError:
                continue
            crashes.see(report)
            launch.refuse_start_failure(report)  # as while it started: a failed run
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


def logs_of(launch: Launch) -> str:
    if launch.spark is None:
        return str(launch.workdir)
    return (f"{launch.scheduler_log if launch.detached else launch.workdir} (the scheduler) "
            f"and, on each Spark worker, heronbridge/{launch.name}/container-N/ in the "
            "application's executor folder")
