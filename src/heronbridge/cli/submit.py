"""`heronbridge submit`: a topology that keeps running in the background."""

from __future__ import annotations

import argparse
from typing import Any

from heronbridge.runtime import admin

from .crash_watch import CrashWatch
from .options import Parents, spark_of
from .run import logs_of
from .starting import StartProgress
from .terminal import console, out
from .topology import load_plan, open_home
from .ui import print_ui_address


def add_verb(verbs: Any, parents: Parents) -> None:
    submit = verbs.add_parser("submit", parents=[parents.topology, parents.home,
                                                 parents.state, parents.scheduler],
                              help="start a topology in the background",
                              description="Start a topology that keeps running in the "
                                          "background, on this machine or a Spark cluster.")
    submit.add_argument("--deactivated", action="store_true",
                        help="start with spouts paused (activate later)")
    submit.set_defaults(func=cmd_submit)


def cmd_submit(args: argparse.Namespace) -> int:
    spark = spark_of(args)
    statemgr, home = open_home(args)
    prepared = load_plan(args, home)
    plan = prepared.plan
    with console.status(f"starting {plan.name}") as status:
        progress = StartProgress(plan, status, console.is_terminal)

        def watch(launch: Any) -> Any:
            crashes = CrashWatch(launch, prepared.files)

            def starting(report: Any) -> None:
                crashes.see(report)
                progress.see(report)
            return starting

        submitted = admin.submit(statemgr, home, plan, prepared.install, not args.deactivated,
                                 spark, sources=prepared.sources(home), watch=watch)
    state_name = "deactivated" if args.deactivated else "running"
    on = "" if spark is None else f" on {spark.master}"
    out.print(f"submitted {plan.name} ({submitted.topology_id}){on}: {state_name}; logs in "
              f"{logs_of(submitted.launch)}")
    print_ui_address(home.root, plan.name)
    return 0
