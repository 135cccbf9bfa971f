"""`heronbridge list`: the submitted topologies and their state."""

from __future__ import annotations

import argparse
from typing import Any

from rich.table import Table

from heronbridge.runtime import admin

from .options import Parents
from .status import actions_table
from .terminal import out
from .topology import open_home


def add_verb(verbs: Any, parents: Parents) -> None:
    lister = verbs.add_parser("list", parents=[parents.home, parents.state],
                              help="list topologies on this machine",
                              description="List submitted topologies and their state.")
    lister.set_defaults(func=cmd_list)


def cmd_list(args: argparse.Namespace) -> int:
    statemgr, _home = open_home(args)
    table = Table(title=f"topologies in {statemgr.uri}")
    for col in ("name", "id", "state", "containers", "tasks", "scheduler", "working dir"):
        table.add_column(col)
    topologies = admin.list_topologies(statemgr)
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
        out.print(f"no topologies in {statemgr.uri}")
    else:
        out.print(table)
        if (actions := actions_table(statemgr, [t.name for t in topologies])) is not None:
            out.print(actions)
    return 0
