"""`heronbridge kill`: stop a topology and remove its state (runtime.admin.kill)."""

from __future__ import annotations

import argparse
from typing import Any

from heronbridge.runtime import admin

from .options import Parents
from .terminal import console, out
from .topology import open_home

HELP = "stop a topology and remove its state"


def add_verb(verbs: Any, parents: Parents) -> None:
    kill = verbs.add_parser("kill", parents=[parents.named, parents.home, parents.state],
                            help=HELP, description=HELP + ".")
    kill.set_defaults(func=cmd_kill)


def cmd_kill(args: argparse.Namespace) -> int:
    statemgr, _home = open_home(args)
    name = args.topology_name
    with console.status(f"killing {name}"):
        killed = admin.kill(statemgr, name)
    if killed.outcome == "corrupt":
        out.print(f"{name}: its state was corrupt ({killed.detail}); removed it")
    elif killed.outcome == "stale":
        out.print(f"{name}: was not running; removed its stale state")
    else:
        out.print(f"killed {name}")
    return 0
