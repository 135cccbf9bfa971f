"""`heronbridge set-log-level NAME [COMPONENT] LEVEL [-t SECONDS] [--logger NAME]`: a
logger's level in a running component's tasks, put back after the timeout (Storm's
`set_log_level`)."""

from __future__ import annotations

import argparse
from typing import Any

from heronbridge.runtime import admin
from heronbridge.runtime.log_levels import LEVEL_NAMES

from .options import Parents
from .terminal import out
from .topology import open_home


def add_verb(verbs: Any, parents: Parents) -> None:
    text = "set a logger's level in a running component's tasks, until a timeout"
    p = verbs.add_parser("set-log-level", parents=[parents.named, parents.home, parents.state],
                         help=text, description=text + " (Storm's set_log_level).")
    p.add_argument("component", nargs="?", default="",
                   help="the component (default: every component)")
    p.add_argument("level", metavar="LEVEL",
                   help=f"one of {', '.join(LEVEL_NAMES)}, or CLEAR for the level before")
    p.add_argument("-t", "--timeout", type=int, default=30,
                   help="seconds until the level before comes back (default 30; 0: never)")
    p.add_argument("--logger", default="", help="a named logger (default: the root logger)")
    p.set_defaults(func=set_log_level)


def set_log_level(args: argparse.Namespace) -> int:
    statemgr, _home = open_home(args)
    level = "" if args.level.upper() == "CLEAR" else args.level
    admin.set_log_level(statemgr, args.topology_name, args.component, level, args.timeout,
                        args.logger)
    who = args.component or "every component"
    what = f"{level.upper()} for {args.timeout}s" if level and args.timeout else \
        level.upper() or "the level before"
    out.print(f"{args.topology_name}: {who}, logger {args.logger or 'root'}: {what}")
    return 0
