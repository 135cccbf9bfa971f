"""A spout's step (step.py): bursts of next_tuple, bounded by calls, time, bytes and the
in-flight window, between reads of what the stream manager sent (acks, fails, control).

A host's turn: `wait(now)` (how long it may wait for input: 0 when a burst may begin),
its read, `received(...)` for what came, then a burst: `begin(now)` and, after each
next_tuple, `returned(now)`, which says whether the burst goes on (`run_burst` runs
the whole of it for a host that calls the spout itself), then `done(now)`.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from typing import Any, cast

from ..telemetry import (
    ACK_COUNT,
    COMPLETE_LATENCY,
    FAIL_COUNT,
    NEXT_TUPLE_COUNT,
    PENDING,
    TIMEOUT_COUNT,
    WINDOW_HELD_MS,
    WINDOW_LIMIT,
    Histogram,
)
from ..wire import frames
from .emitter import SpoutEmitter
from .pacing import IDLE_WAIT, SpoutPacer
from .step import MAX_WAIT, Checkpoints, Clock, TaskStep
from .task import Task
from .window import InFlightWindow

LATENCY_SAMPLES = 64  # complete latencies recorded per batch of acks, at most
NO_LIMIT = float("inf")


class Burst:
    """The burst under way, and how the last one ended."""

    __slots__ = ("before", "began", "calls", "emitted", "idle", "most", "ready")

    def __init__(self) -> None:
        self.ready = False  # the turn's wait allows a burst once what came is read
        self.idle = False  # the last call emitted nothing: wait a little before the next
        self.calls = 0
        self.began = self.before = 0.0  # when it began; when the last call began
        self.emitted = 0  # the collector's emits before the last call
        self.most = 0  # the emit count that ends it (emit.batch.size.bytes)


class SpoutStep(TaskStep):
    """The spout's policy: the in-flight window (and the time it held the spout), bursts
    and pacing, backpressure, acks for at-most-once emits, what completed trees tell the
    spout, activation, counters and the metrics cadence."""

    def __init__(self, task: Task, clock: Clock = time.monotonic,
                 checkpoints: Checkpoints | None = None,
                 flush: Callable[[], None] | None = None, component: Any = None) -> None:
        super().__init__(task, clock, checkpoints, flush)
        conf = task.conf
        # What the step calls: the spout, or its host's stand-in for one that asks for
        # its commands (pull.py).
        self.component = component
        self.pacer = SpoutPacer(conf)
        self.window = InFlightWindow(conf.max_spout_pending, conf.acking,
                                     conf.latency_target_secs)
        self.latency = Histogram()
        self.active = False  # it runs: its topology is RUNNING and processing
        self.held_ms = 0.0  # with its in-flight window full
        self._held_at: float | None = None  # when the window was last seen full, if it was
        self.burst = Burst()

    def _spout(self) -> Any:
        return self.component if self.component is not None else self.task.user

    # -- frames in --------------------------------------------------------------------

    def received(self, data: bytes, found: list) -> None:
        """Completed, failed and expired trees go to the spout's ack and fail; control
        frames to `take_control`. Replays emitted meanwhile go out before next_tuple."""
        em = cast("SpoutEmitter", self.task.emitter)
        pending = em.pending
        pop = pending.pop
        spout = self._spout()
        counts, window = self.counts, self.window
        now = em.now = self.clock()  # what ack and fail emit (replays) is emitted now
        for i, (kind, _dest, start, end) in enumerate(found):
            if kind == frames.CONTROL:
                self.take_control(data, found, i)
                continue
            try:
                roots = frames.ints_from(memoryview(data)[start + frames.HEADER_SIZE:end])
            except ValueError as exc:  # not a whole number of roots
                self.task.malformed(f"{frames.KIND_NAMES[kind]} frame", exc)
                continue
            entries = [e for e in map(pop, roots, itertools.repeat(None)) if e is not None]
            if kind == frames.ACKED:
                counts[ACK_COUNT] += len(entries)
                ack = spout.ack
                for msg_id, _ in entries:
                    ack(msg_id)
                # Complete latency from a sample of each batch: exact counts are in
                # ack-count; the histogram only needs a representative spread.
                add = self.latency.add
                sample = entries[::max(1, len(entries) // LATENCY_SAMPLES)]
                for _, emitted_at in sample:
                    add(now - emitted_at)
                if sample:
                    window.acked(now - sum(e for _, e in sample) / len(sample),
                                 len(pending) + len(entries), now)
            else:
                counts[FAIL_COUNT if kind == frames.FAILED else TIMEOUT_COUNT] += len(entries)
                if kind == frames.FAILED and entries:  # a bolt's answer: a round trip too
                    window.acked(now - entries[-1][1], len(pending) + len(entries), now)
                fail = spout.fail
                for msg_id, _ in entries:
                    fail(msg_id)
        if em.unflushed:  # replays from fail(): out before next_tuple runs
            self.flush()

    def activation(self) -> None:
        """A spout runs while its topology is RUNNING, and not mid-rollback."""
        running = self.running and self.processing
        if running and not self.active:
            self.active = True
            self.pacer.activated(self.clock())
            self._spout().activate()
        elif not running and self.active:
            self.active = False
            self._spout().deactivate()

    def start_checkpoint(self, checkpoints: Checkpoints, checkpoint_id: str) -> None:
        checkpoints.checkpoint(checkpoint_id)

    def rolling_back(self, txid: int) -> None:
        """The component is rebuilt: it starts inactive, its trees and window afresh."""
        super().rolling_back(txid)
        self.active = False
        conf = self.task.conf
        self.window = InFlightWindow(conf.max_spout_pending, conf.acking,
                                     conf.latency_target_secs)

    def stop(self) -> None:
        """The task stops: an active spout is deactivated first, as Storm's are when their
        topology is killed."""
        if self.active:
            self.active = False
            self._spout().deactivate()

    # -- a turn -----------------------------------------------------------------------

    def wait(self, now: float) -> float:
        """How long the host may wait for input before this turn's burst (0: none)."""
        em = cast("SpoutEmitter", self.task.emitter)
        if em.ack_now:
            self.ack_emitted()
        pending = len(em.pending)
        window, burst = self.window, self.burst
        limit = window.limit
        held_at = self._held_at
        full = pending >= (limit if held_at is None else window.resume_below(self.pacer.burst))
        if full:
            window.stalled(now)
            if window.limit != limit:  # it doubled: room now, perhaps
                full = pending >= window.resume_below(self.pacer.burst)
        if held_at is not None:
            self.held_ms += (now - held_at) * 1000
        self._held_at = now if full else None
        pacer = self.pacer
        if not self.active or full or self.backpressured(now):
            burst.ready = False
            return max(0.0, min(MAX_WAIT, self.next_metrics - now))
        if pending and pacer.awaiting_acks(now):
            burst.ready = False
            return pacer.acks_until - now
        burst.ready = True
        return IDLE_WAIT if burst.idle else 0.0

    def begin(self, now: float) -> bool:
        """Whether a burst begins now (the turn's wait allowed one, and what was read
        since left the spout active and its window open)."""
        burst = self.burst
        em = cast("SpoutEmitter", self.task.emitter)
        if not burst.ready or not self.active or len(em.pending) >= self.window.limit:
            return False
        burst.ready = burst.idle = False
        burst.calls = 0
        burst.began = burst.before = em.now = now
        burst.emitted = em.emitted
        burst.most = self.pacer.burst_end(burst.emitted, em.bytes_per_emit)
        return True

    def returned(self, now: float) -> bool:
        """A next_tuple call of the burst returned at `now`: whether the burst goes on.
        It ends when the call emitted nothing, the window filled, after the burst's
        calls, emit.batch.time or about emit.batch.size.bytes of tuples, and at each
        emit while the pacer is eager."""
        burst = self.burst
        em = cast("SpoutEmitter", self.task.emitter)
        self.counts[NEXT_TUPLE_COUNT] += 1
        if em.ack_now:
            self.ack_emitted()
        emitted = em.emitted
        if emitted == burst.emitted:
            self.pacer.idle(burst.before, now)
            burst.idle = True
            return False
        burst.calls += 1
        pacer = self.pacer
        if burst.calls >= pacer.burst or emitted >= burst.most \
                or len(em.pending) >= self.window.limit or now - burst.began > pacer.burst_secs \
                or now < pacer.eager_until:
            return False
        burst.emitted, burst.before = emitted, now
        em.now = now
        return True

    def run_burst(self, most: float = NO_LIMIT) -> int:
        """For a host that calls the spout itself: a burst, if one may begin now, of at
        most `most` calls (a harness's budget); returns the calls made."""
        clock = self.clock
        if not self.begin(clock()):
            return 0
        next_tuple = self._spout().next_tuple
        returned = self.returned
        calls = 0
        while True:
            next_tuple()
            calls += 1
            if not returned(clock()) or calls >= most:
                return calls

    def done(self, now: float) -> None:
        """The turn's end: its output out, and metrics when due."""
        self.flush()
        self.publish_due(now)

    def ack_emitted(self) -> None:
        """At-most-once: a message id is acked as soon as it is emitted."""
        em = cast("SpoutEmitter", self.task.emitter)
        acked, em.ack_now = em.ack_now, []
        ack = self._spout().ack
        for msg_id in acked:
            ack(msg_id)
        self.counts[ACK_COUNT] += len(acked)

    # -- metrics and timers -----------------------------------------------------------

    def report(self, counters: dict[str, float], gauges: dict[str, float],
               histograms: dict[str, list[int]]) -> None:
        super().report(counters, gauges, histograms)
        counters[WINDOW_HELD_MS] = self.held_ms
        em = self.task.emitter
        if isinstance(em, SpoutEmitter):
            gauges[PENDING] = len(em.pending)
        if self.window.limit != NO_LIMIT:
            gauges[WINDOW_LIMIT] = self.window.limit
        histograms[COMPLETE_LATENCY] = self.latency.counts

    def due(self, now: float) -> float:
        """Besides metrics: a full latency-led window doubles when nothing came back for
        a while; a spout that slept when idle waits for its trees' acks until then."""
        at = super().due(now)
        stalls_at = self.window.stalls_at() if self._held_at is not None else None
        if stalls_at is not None:
            at = min(at, stalls_at)
        acks_until = self.pacer.acks_until
        if acks_until > now and cast("SpoutEmitter", self.task.emitter).pending:
            at = min(at, acks_until)
        return at
