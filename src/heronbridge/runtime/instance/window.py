"""How many tuple trees a spout may have in flight.

`topology.max.spout.pending`, when set, is the limit. Without it, the limit follows the
complete latency (Little's law: trees in flight = ack rate x latency): it grows while
the latency stays under `heronbridge.spout.latency.target.ms` and shrinks in proportion
when it goes over, so that a spout faster than its bolts fills their queues only up to
about that latency instead of up to the backpressure watermarks. It starts at one tree,
as TCP's slow start does: a bolt still loading its code when the spouts start holds
one tree back, not a burst of them. A full window that hears nothing back (bolts that
never ack: their trees only expire) doubles every STALL_SECS, so such a topology still
emits as Storm would without the option. At-most-once (no acks) has no limit.
"""

from __future__ import annotations

MIN_LIMIT = 16
START_LIMIT = 1
SLOW_START = 2.0  # growth per ack batch under the target, until the first time over it
GROWTH = 1.05  # ... and after
SMOOTHING = 0.25  # weight of the newest batch's latency
STALL_SECS = 1.0


class InFlightWindow:
    __slots__ = ("adaptive", "growth", "heard", "latency", "limit", "target")

    def __init__(self, max_pending: int | None, acking: bool, target_secs: float) -> None:
        self.adaptive = acking and max_pending is None and target_secs > 0
        self.target = target_secs
        self.latency = 0.0
        self.growth = SLOW_START
        self.heard: float | None = None  # when an ack or fail last came back
        if not acking:
            self.limit = float("inf")
        elif max_pending is not None:
            self.limit = float(max_pending)
        else:
            self.limit = float(START_LIMIT) if self.adaptive else float("inf")

    def resume_below(self, burst: int) -> float:
        """Once the window is full, wait until a burst's worth of it is free again:
        emitting one tuple per returning ack would cost a flush and a wake-up per tuple."""
        limit = self.limit
        if limit == float("inf"):
            return limit
        return max(1.0, limit - min(burst, max(1, int(limit) // 4)))

    def stalled(self, now: float) -> None:
        """The window is full: if nothing came back for STALL_SECS, double it."""
        if not self.adaptive:
            return
        if self.heard is None:
            self.heard = now
        elif now - self.heard >= STALL_SECS:
            self.heard = now
            self.limit *= 2

    def stalls_at(self) -> float | None:
        """When a full window that hears nothing back next doubles (None: it does not)."""
        return self.heard + STALL_SECS if self.adaptive and self.heard is not None else None

    def acked(self, latency: float, in_flight: int, now: float) -> None:
        """One ack (or bolt fail) batch's mean latency: adjust the limit (it grows only
        while it binds, up to twice what was in flight). `in_flight` counts the batch's
        own trees: counted after they left, a window of one never saw one in flight, and
        never grew, at any parallelism downstream."""
        if not self.adaptive:
            return
        self.heard = now
        self.latency = latency if not self.latency else \
            (1 - SMOOTHING) * self.latency + SMOOTHING * latency
        if self.latency <= self.target:
            self.limit = max(self.limit, min(self.limit * self.growth, 2.0 * in_flight))
        else:
            self.growth = GROWTH
            self.limit = max(MIN_LIMIT, self.limit * self.target / self.latency)
