"""What every process of a topology does first (task, stream manager, metrics manager,
topology master, health manager, executor, schedulers): read its arguments, log in one
format to stderr (its executor files the lines), take the topology's secret from the
pipe its parent handed it, and open the state manager. Then it runs, on an event loop or not."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .wire.auth import inherited_keys

if TYPE_CHECKING:
    from .statemgr import StateManager

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


@dataclass
class Start:
    """A process's arguments, and what it opens from them when it asks."""

    args: argparse.Namespace

    def secret(self) -> bytes:
        """The topology's secret its parent handed it (read once: see inherited_keys)."""
        return inherited_keys()[0]

    def keys(self) -> tuple[bytes, bytes | None]:
        """The topology's secret and, for a task, its checkpoint key (read once)."""
        return inherited_keys()

    def statemgr(self) -> StateManager:
        """The state manager `--state` names (imported here: a task needs none)."""
        from .statemgr import open_statemgr

        return open_statemgr(self.args.state)


def start(prog: str, description: str, argv: list[str] | None,
          arguments: Callable[[argparse.ArgumentParser], object] | None = None,
          topology: bool = True) -> Start:
    """Parse `argv` (with --state and --topology unless `topology` is false, and what
    `arguments` adds) and set up logging."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    if topology:
        parser.add_argument("--state", required=True, help="state manager location")
        parser.add_argument("--topology", required=True)
    if arguments is not None:
        arguments(parser)
    args = parser.parse_args(argv)
    log_to_stderr()
    return Start(args)


def log_to_stderr() -> None:
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format=LOG_FORMAT)
