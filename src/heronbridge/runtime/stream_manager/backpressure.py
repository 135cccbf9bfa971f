"""Backpressure, without sockets: who causes it, and whether the local spouts read.

A cause is a connection whose unsent bytes passed the high watermark (a local task,
`("instance", task)`, or a peer we send to, `("stmgr", id)`) until they drain below the
low one, or frames held for tasks that are down (`HELD`: the spouts' replays then wait in
the spouts, untracked, instead of failing again). While any local cause holds, every
peer is told (`announce`); while any local or remote cause holds, the local spouts are not
read (`pause_spouts`). Time is counted in all (`paused_ms`) and per cause (`ms_by_cause`):
the health manager reads who is slow.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from collections.abc import Callable

log = logging.getLogger("heronbridge.runtime.stream_manager")

Cause = tuple[str, object]  # ("instance", task), ("stmgr", peer id) or HELD
HELD: Cause = ("held", "frames")


class Backpressure:
    def __init__(self, name: str, announce: Callable[[bool], None],
                 pause_spouts: Callable[[bool], None]) -> None:
        self.name = name
        self.announce = announce  # tell every peer that ours started (True) or ended
        self.pause_spouts = pause_spouts
        self.local_causes: set[Cause] = set()
        self.remote_causes: set[str] = set()
        self.spouts_paused = False
        self._paused_since = 0.0
        self._paused_ms = 0.0
        self._ms_by_cause: dict[Cause, float] = defaultdict(float)
        self._since: dict[Cause, float] = {}

    def start(self, cause: Cause) -> None:
        self._since.setdefault(cause, time.monotonic())
        first = not self.local_causes
        self.local_causes.add(cause)
        if first:
            log.info("%s: backpressure started by %s %s", self.name, *cause)
            self.announce(True)
        self._update()

    def stop(self, cause: Cause) -> None:
        since = self._since.pop(cause, None)
        if since is not None:
            self._ms_by_cause[cause] += (time.monotonic() - since) * 1000
        if cause not in self.local_causes:
            return
        self.local_causes.discard(cause)
        if not self.local_causes:
            log.info("%s: backpressure relieved", self.name)
            self.announce(False)
        self._update()

    def held(self, active: bool) -> None:
        """Frames started (or stopped) being held for tasks that are down."""
        (self.start if active else self.stop)(HELD)

    def peer(self, peer: str, active: bool) -> None:
        """A peer said its backpressure started or ended (or it went away: ended)."""
        if active:
            self.remote_causes.add(peer)
        else:
            self.remote_causes.discard(peer)
        self._update()

    def _update(self) -> None:
        paused = bool(self.local_causes or self.remote_causes)
        if paused == self.spouts_paused:
            return
        self.spouts_paused = paused
        now = time.monotonic()
        if paused:
            self._paused_since = now
        else:
            self._paused_ms += (now - self._paused_since) * 1000
        self.pause_spouts(paused)

    def paused_ms(self) -> float:
        """How long the local spouts were paused, in all, until now."""
        if self.spouts_paused:
            return self._paused_ms + (time.monotonic() - self._paused_since) * 1000
        return self._paused_ms

    def ms_by_cause(self) -> dict[Cause, float]:
        """How long each cause held, until now."""
        now = time.monotonic()
        by_cause = dict(self._ms_by_cause)
        for cause, since in self._since.items():
            by_cause[cause] = by_cause.get(cause, 0.0) + (now - since) * 1000
        return by_cause
