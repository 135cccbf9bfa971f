"""What every scheduler does until its topology ends: keep its containers running, and
stop on SIGTERM or once the topology is killed through the state manager, from any host
(`heronbridge kill` deletes the topology's node; its scheduler follows the node)."""

from __future__ import annotations

import argparse
import logging
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from ..errors import SchedulerError, StateManagerError
from ..process import log_to_stderr
from ..proto import topology_pb2
from ..statemgr import TOPOLOGIES, StateManager
from .home import Home

log = logging.getLogger("heronbridge.runtime.scheduler")


class Scheduler(Protocol):
    def start(self) -> None: ...

    def check(self) -> list[int]: ...

    def stop(self) -> None: ...


def still_submitted(statemgr: StateManager, name: str, topology_id: str) -> bool:
    """Whether `topology_id` is still the topology `name` in the state: a container that
    ended is started again only then (True while the state is away for a while)."""
    try:
        topology = statemgr.get(TOPOLOGIES, name)
    except StateManagerError:
        return True
    return topology is not None and topology.id == topology_id


class KillWatch:
    """`is_set()` once the topology node this watch first saw is gone or replaced."""

    def __init__(self, statemgr: StateManager, name: str) -> None:
        self._event = threading.Event()
        self._id: str | None = None
        self._watch = statemgr.watch(TOPOLOGIES, name, self._changed)

    def _changed(self, node: topology_pb2.Topology | None) -> None:
        if node is not None and self._id in (None, node.id):
            self._id = node.id
        elif self._id is not None:
            self._event.set()

    def is_set(self) -> bool:
        return self._event.is_set()

    def cancel(self) -> None:
        self._watch.cancel()


def serve(scheduler: Scheduler, statemgr: StateManager, name: str,
          interval: float = 0.2) -> None:
    """Start `scheduler`, restart what dies, stop on SIGTERM/SIGINT or a kill."""
    stopping: list[int] = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda signum, _frame: stopping.append(signum))
    killed = KillWatch(statemgr, name)
    try:
        scheduler.start()
        while not stopping and not killed.is_set():
            time.sleep(interval)
            scheduler.check()
    finally:
        killed.cancel()
        scheduler.stop()


def detached_main(prog: str, argv: list[str] | None,
                  make: Callable[[StateManager, Home, argparse.Namespace], Scheduler],
                  add_arguments: Callable[[argparse.ArgumentParser], None] | None = None,
                  ) -> int:
    """The main of a detached scheduler process (what `heronbridge submit` leaves
    running): `make(statemgr, home, args)` builds the scheduler that `serve` runs."""
    parser = argparse.ArgumentParser(prog=prog)
    parser.add_argument("--home", required=True)
    parser.add_argument("--state", help="state location (default: the home's)")
    parser.add_argument("--topology", required=True)
    if add_arguments is not None:
        add_arguments(parser)
    args = parser.parse_args(argv)
    log_to_stderr()
    home = Home(Path(args.home), args.state)
    statemgr = home.open_statemgr()
    try:
        serve(make(statemgr, home, args), statemgr, args.topology)
    except SchedulerError as exc:
        log.error("%s", exc)
        return 1
    finally:
        statemgr.close()
    return 0
