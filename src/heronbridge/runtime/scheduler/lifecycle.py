"""What every scheduler does until its topology ends: keep its containers running, and
stop on SIGTERM or once the topology is killed through the state manager, from any host
(`heronbridge kill` deletes the topology's node; its scheduler follows the node).

A scheduler that is told to stop ends within SHUTDOWN_GRACE_SECS whatever it cannot
reach: its last calls to the state have a deadline, and a watchdog ends the process,
saying where it was stuck, when stopping takes longer. A scheduler whose state has been
unreachable for `heronbridge.scheduler.orphan.secs` stops by itself: whoever owns the
topology could not reach it to kill it either.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from ..config import KEYS, SCHEDULER_ORPHAN_SECS
from ..errors import SchedulerError, StateManagerError, where
from ..process import log_to_stderr
from ..proto import topology_pb2
from ..statemgr import TOPOLOGIES, StateManager
from .home import Home

log = logging.getLogger("heronbridge.runtime.scheduler")

SHUTDOWN_GRACE_SECS = 60.0  # from the stop's cause (a signal, a kill, an orphaned state)
STATE_AT_STOP_SECS = 10.0  # what a stopping scheduler's state calls may wait, altogether
ORPHAN_SECS = float(KEYS[SCHEDULER_ORPHAN_SECS].default)
EXIT_STUCK = 3  # the watchdog ended a stop that outlasted its grace


class Scheduler(Protocol):
    orphan_secs: float | None  # heronbridge.scheduler.orphan.secs of its topology

    def start(self) -> None: ...

    def check(self) -> list[int]: ...

    def stop(self) -> None: ...

    def kill_now(self) -> None:
        """The last resort of a stop that outlasted its grace: SIGKILL whatever this
        process started that would not die with it. Called from the watchdog's thread."""
        ...


def still_submitted(statemgr: StateManager, name: str, topology_id: str) -> bool:
    """Whether `topology_id` is still the topology `name` in the state: a container that
    ended is started again only then (True while the state is away for a while)."""
    try:
        topology = statemgr.get(TOPOLOGIES, name)
    except StateManagerError:
        return True
    return topology is not None and topology.id == topology_id


def clear_at_stop(statemgr: StateManager, name: str) -> None:
    """A stopping scheduler's last act, its containers stopped: the topology's nodes
    removed, within STATE_AT_STOP_SECS whatever the state's health."""
    try:
        with statemgr.hurry(STATE_AT_STOP_SECS):
            statemgr.clear(name)
    except StateManagerError as exc:
        msg = (f"{where(name)}: its containers stopped, but its nodes in the state stay "
               f"(heronbridge kill {name} removes them): {exc}")
        raise StateManagerError(msg) from exc


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


class Watchdog(threading.Thread):
    """Ends the process when its stop outlasts the grace; begins the stop when the state
    has been unreachable for `orphan_secs`."""

    def __init__(self, name: str, statemgr: StateManager, scheduler: Scheduler,
                 grace: float = SHUTDOWN_GRACE_SECS, tick: float = 0.5) -> None:
        super().__init__(name="scheduler-watchdog", daemon=True)
        self.topology = name
        self.statemgr = statemgr
        self.scheduler = scheduler
        self.grace = grace
        self.tick = tick
        self.why: str | None = None  # why the stop began
        self.since: float | None = None  # when (time.monotonic())
        self.orphaned: str | None = None  # why, when the state was unreachable too long

    def begin(self, why: str) -> None:
        """The stop began: the process ends within the grace from now. Safe in a signal
        handler (assignments only: no lock the interrupted thread may hold)."""
        if self.since is None:
            self.since = time.monotonic()
            self.why = why

    def run(self) -> None:
        while True:
            time.sleep(self.tick)
            since = self.since
            if since is None:
                self._check_orphaned()
            elif time.monotonic() - since > self.grace:
                self._give_up()
                return

    def _check_orphaned(self) -> None:
        limit = self.scheduler.orphan_secs
        away = self.statemgr.unreachable_secs()
        if limit is None or away < limit:
            return
        self.orphaned = (f"{where(self.topology)}: its state at {self.statemgr.uri} has been "
                         f"unreachable for {away:.0f}s ({SCHEDULER_ORPHAN_SECS} = {limit:g}): "
                         "whoever owns the topology cannot reach this scheduler to kill it "
                         "either; stopping the topology")
        log.error("%s", self.orphaned)
        self.begin(f"its state unreachable for {away:.0f}s")

    def _give_up(self) -> None:
        frame = sys._current_frames().get(threading.main_thread().ident or 0)
        stack = "".join(traceback.format_stack(frame)) if frame is not None else "(unknown)"
        log.error("%s: still stopping %.0fs after %s (grace %gs); killing what is left of its "
                  "containers and exiting. The main thread was at:\n%s", where(self.topology),
                  time.monotonic() - (self.since or 0.0), self.why, self.grace, stack.rstrip())
        try:
            self.scheduler.kill_now()
        except Exception:  # noqa: BLE001 - exiting regardless
            log.exception("%s: killing its containers failed", where(self.topology))
        for handler in logging.getLogger().handlers:
            handler.flush()
        os._exit(EXIT_STUCK)


def serve(scheduler: Scheduler, statemgr: StateManager, name: str,
          interval: float = 0.2, grace: float = SHUTDOWN_GRACE_SECS) -> None:
    """Start `scheduler`, restart what dies, stop on SIGTERM/SIGINT, a kill, or the state
    unreachable for the scheduler's `orphan_secs` (then SchedulerError, once stopped). The
    process ends within `grace` of the stop's cause (the watchdog's os._exit at worst)."""
    watchdog = Watchdog(name, statemgr, scheduler, grace)

    def on_signal(signum: int, _frame: object) -> None:
        watchdog.begin(signal.Signals(signum).name)

    def on_signals() -> None:
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, on_signal)

    on_signals()
    watchdog.start()
    killed = KillWatch(statemgr, name)
    try:
        scheduler.start()
        on_signals()  # a SparkContext installs a SIGINT handler of its own
        while watchdog.since is None:
            if killed.is_set():
                watchdog.begin("its topology killed through the state")
                break
            time.sleep(interval)
            scheduler.check()
    except BaseException as exc:
        watchdog.begin(f"{type(exc).__name__}: {exc}")
        raise
    finally:
        log.info("%s: stopping (%s)", where(name), watchdog.why)
        killed.cancel()
        scheduler.stop()
    if watchdog.orphaned is not None:
        raise SchedulerError(watchdog.orphaned)


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
    except (SchedulerError, StateManagerError) as exc:
        log.error("%s", exc)
        return 1
    finally:
        statemgr.close()
    return 0
