"""`heronbridge logs NAME [COMPONENT | TASK] [-f]`: the task logs of a topology, merged by
time, and followed with -f (what `sparse tail` did over SSH): from this host's files, or
from the stream manager of a container on another host (a Spark worker)."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from heronbridge.ui import NotFound
from heronbridge.ui.logs import open_logs
from heronbridge.ui.tracker import Tracker

from .options import Parents
from .topology import open_home

FOLLOW_SECS = 0.5


def add_verb(verbs: Any, parents: Parents) -> None:
    text = "print a topology's task logs merged by time, and follow them"
    p = verbs.add_parser("logs", parents=[parents.named, parents.home, parents.state],
                         help=text, description=text + " on any host of the topology (a "
                         "remote container's through its stream manager; this user's files "
                         "only).")
    p.add_argument("which", nargs="?", metavar="COMPONENT|TASK",
                   help="one component's tasks, or one task by id (default: every task)")
    p.add_argument("-f", "--follow", action="store_true",
                   help="keep printing lines as they are written, until interrupted")
    p.add_argument("-n", "--lines", type=int, default=20,
                   help="lines to print first, of all the tasks together (default 20)")
    p.set_defaults(func=logs)


def logs(args: argparse.Namespace) -> int:
    statemgr, home = open_home(args)
    t = Tracker(statemgr).refresh(args.topology_name)
    if t is None:
        msg = f"topology {args.topology_name!r} is not known to the state manager"
        raise NotFound(msg)
    followed, first = open_logs(statemgr, t, home.root, args.which, args.lines)
    _print(first)
    try:
        while args.follow:
            time.sleep(FOLLOW_SECS)
            _print(followed.read_new(strict=False))
    except KeyboardInterrupt:
        pass
    finally:
        followed.close()
    return 0


def _print(lines: list[tuple[float, int, str]]) -> None:
    for _, _, line in lines:
        sys.stdout.write(line + "\n")
    sys.stdout.flush()
