"""`heronbridge activate`: resume a topology's spouts (and the shape `deactivate` shares)."""

from __future__ import annotations

import argparse
from functools import partial
from typing import Any

from heronbridge.runtime import admin
from heronbridge.runtime.proto import topology_pb2

from .options import Parents
from .terminal import out
from .topology import open_home


def add_verb(verbs: Any, parents: Parents) -> None:
    add_state_verb(verbs, parents, "activate", True, "resume a topology's spouts")


def add_state_verb(verbs: Any, parents: Parents, verb: str, running: bool,
                   text: str) -> None:
    p = verbs.add_parser(verb, parents=[parents.named, parents.home, parents.state],
                         help=text, description=text + ".")
    p.set_defaults(func=partial(set_running, running=running))


def set_running(args: argparse.Namespace, running: bool) -> int:
    statemgr, _home = open_home(args)
    new = (admin.activate if running else admin.deactivate)(statemgr, args.topology_name)
    out.print(f"{args.topology_name}: {topology_pb2.TopologyState.Name(new)}")
    return 0
