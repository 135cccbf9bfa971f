"""`heronbridge update` (Heron's `heron update`): a new parallelism for components of a
running topology, without a restart."""

from __future__ import annotations

import argparse
from typing import Any

from rich.table import Table

from heronbridge.runtime import admin
from heronbridge.runtime.control import parse_parallelism
from heronbridge.runtime.scheduler import Home

from ..errors import HeronbridgeError
from .options import Parents
from .terminal import console, out


def add_verb(verbs: Any, parents: Parents) -> None:
    p = verbs.add_parser(
        "update", parents=[parents.named, parents.home, parents.state],
        help="change components' parallelism in a running topology",
        description="Change the parallelism of components of a running topology without "
                    "restarting it: its spouts pause while the trees in flight complete, "
                    "only the tasks and containers the new packing plan changes stop or "
                    "start, then the spouts resume.")
    p.add_argument("--component-parallelism", action="append", required=True,
                   metavar="COMPONENT:N", help="a component's new parallelism (repeat, or "
                                               "separate with commas)")
    p.add_argument("--containers", type=int, metavar="K",
                   help="pack anew into K containers (default: keep the containers, add "
                        "what the packing needs)")
    p.add_argument("--dry-run", action="store_true",
                   help="show the new packing plan without applying it")
    p.set_defaults(func=cmd_update)


def cmd_update(args: argparse.Namespace) -> int:
    from pathlib import Path

    home = Home(Path(args.home), args.state)
    statemgr = home.open_statemgr()
    name = args.topology_name
    parallelism = parse_parallelism(args.component_parallelism, name)
    if args.containers is not None and args.containers < 1:
        msg = f"topology {name!r}: --containers expects an integer >= 1, received " \
              f"{args.containers}"
        raise HeronbridgeError(msg)
    with console.status(f"updating {name}"):
        report = admin.update(statemgr, name, parallelism, args.containers, args.dry_run,
                              reason="heronbridge update")
    table = Table(title=f"{name}: packing {report.old_packing_id} -> "
                        f"{report.new_packing_id}" + (" (dry run)" if args.dry_run else ""))
    table.add_column("container")
    table.add_column("tasks")
    for container in report.packing.containers:
        table.add_row(str(container.id), ", ".join(f"{i.component}/{i.task_id}"
                                                   for i in container.instances))
    out.print(table)
    changed = (f"started tasks {list(report.started_tasks)}, stopped "
               f"{list(report.stopped_tasks)}; containers added "
               f"{list(report.added_containers)}, removed {list(report.removed_containers)}")
    if args.dry_run:
        out.print(f"would have {changed}")
    else:
        out.print(f"{changed}; spouts paused {report.paused_secs:.2f}s (draining "
                  f"{report.drain_secs:.2f}s; {report.trees_in_flight} trees were still "
                  "in flight at the switch and fail back to their spouts)")
    return 0
