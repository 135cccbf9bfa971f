"""The spout driver: bursts of next_tuple, bounded by time, bytes and the in-flight window,
then a flush; between bursts, what the stream manager sent (acks, fails, control).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from typing import cast

from ..errors import ProtocolError
from ..telemetry import ACK_COUNT, FAIL_COUNT, NEXT_TUPLE_COUNT, TIMEOUT_COUNT
from ..wire import frames
from .emitter import SpoutEmitter
from .pacing import IDLE_WAIT
from .task import Task

LATENCY_SAMPLES = 64  # complete latencies recorded per batch of acks, at most


class SpoutDriver:
    def __init__(self, task: Task) -> None:
        self.task = task

    def run(self) -> None:
        """Until the task stops (a rollback unwinds it: see RolledBack)."""
        task = self.task
        spout, em, conn, pacer = task.user, task.emitter, task.conn, task.pacer
        if not isinstance(em, SpoutEmitter) or conn is None or pacer is None:
            msg = f"{task.loc()}: the spout driver runs a registered spout task"
            raise ProtocolError(msg)
        next_tuple = spout.next_tuple
        pending = em.pending
        window = task.window
        burst = pacer.burst
        burst_secs = pacer.burst_secs
        window_full = False
        held_at = 0.0  # when the window was last seen full (0: it was not)
        task.reset_backpressure()
        interval = task.conf.metrics_interval_secs
        next_metrics = time.monotonic() + interval
        monotonic = time.monotonic
        data, found = task.backlog
        task.backlog = (b"", [])
        settle(task, data, found)
        while not task.stopping:
            now = monotonic()
            max_pending = window.limit
            window_full = len(pending) >= (window.resume_below(burst) if window_full
                                           else max_pending)
            if window_full:
                window.stalled(now)
                if held_at:
                    task.held_ms += (now - held_at) * 1000
                held_at = now
            elif held_at:
                task.held_ms += (now - held_at) * 1000
                held_at = 0.0
            can_emit = task.active and not window_full and not task.backpressured(now)
            wait = 0.0
            if not can_emit:
                wait = min(0.1, next_metrics - now)
            elif pacer.awaiting_acks(now) and pending:
                can_emit, wait = False, pacer.acks_until - now
            data, found = conn.poll(wait)
            if found:
                settle(task, data, found)
                if em.unflushed:  # replays from fail(): out before next_tuple runs
                    task.flush()
                can_emit = can_emit and task.active and len(pending) < max_pending
            if can_emit:
                # A burst ends when next_tuple emits nothing, the window fills, or after
                # emit.batch.time or about emit.batch.size.bytes of tuples.
                start = emitted = em.emitted
                em.now = began = before = monotonic()
                most = pacer.burst_end(start, em.bytes_per_emit)
                eager_until = pacer.eager_until
                calls = 0
                for calls in range(1, burst + 1):  # noqa: B007 - counted after the loop
                    next_tuple()
                    after = monotonic()
                    now_emitted = em.emitted
                    if now_emitted == emitted:
                        pacer.idle(before, after)
                        break
                    if now_emitted >= most or len(pending) >= max_pending \
                            or after - began > burst_secs or after < eager_until:
                        break
                    emitted, before = now_emitted, after
                task.counts[NEXT_TUPLE_COUNT] += calls
                if em.ack_now:
                    acked, em.ack_now = em.ack_now, []
                    for msg_id in acked:
                        spout.ack(msg_id)
                    task.counts[ACK_COUNT] += len(acked)
                if em.emitted == start:
                    task.flush()
                    data, found = conn.poll(IDLE_WAIT)
                    if found:
                        settle(task, data, found)
            task.flush()
            if now >= next_metrics:
                task.publish()
                next_metrics = now + interval


def settle(task: Task, data: bytes, found: list, ack: Callable | None = None,
           fail: Callable | None = None) -> None:
    """Apply what the stream manager sent a spout: completed, failed and expired trees go
    to `ack` and `fail` (the spout's own methods by default); control frames to the task."""
    pending = cast("SpoutEmitter", task.emitter).pending
    pop = pending.pop
    ack = ack or task.user.ack
    fail = fail or task.user.fail
    counts, window = task.counts, task.window
    now = time.monotonic()
    for i, (kind, _dest, start, end) in enumerate(found):
        if kind == frames.CONTROL:
            task.take_control(data, found, i)
            continue
        try:
            roots = frames.ints_from(memoryview(data)[start + frames.HEADER_SIZE:end])
        except ValueError as exc:  # not a whole number of roots
            task.malformed(f"{frames.KIND_NAMES[kind]} frame", exc)
            continue
        entries = [e for e in map(pop, roots, itertools.repeat(None)) if e is not None]
        if kind == frames.ACKED:
            counts[ACK_COUNT] += len(entries)
            for msg_id, _ in entries:
                ack(msg_id)
            # Complete latency from a sample of each batch: exact counts are in ack-count;
            # the histogram only needs a representative spread.
            add = task.latency.add
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
            for msg_id, _ in entries:
                fail(msg_id)
