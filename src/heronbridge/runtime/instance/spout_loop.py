"""The spout loop: bursts of next_tuple, bounded by time, bytes and the in-flight window,
then a flush; between bursts, what the stream manager sent (acks, fails, control).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable

from ..telemetry import ACK_COUNT, FAIL_COUNT, NEXT_TUPLE_COUNT, TIMEOUT_COUNT
from ..wire import frames
from .pacing import EAGER_SECS, IDLE_WAIT, MAX_ACK_WAIT, SLOW_IDLE

LATENCY_SAMPLES = 64  # complete latencies recorded per batch of acks, at most


class SpoutLoop:
    """The loop of a spout task (mixed into InstanceRunner over TaskCore)."""

    def _spout_loop(self) -> None:
        spout, em, conn = self.user, self.emitter, self.conn
        next_tuple = spout.next_tuple
        pending = em.pending
        window = self.window
        burst = self.conf.spout_burst
        burst_secs, burst_bytes = self.conf.emit_batch_secs, self.conf.emit_batch_bytes
        window_full = False
        self.reset_backpressure()
        interval = self.conf.metrics_interval_secs
        next_metrics = time.monotonic() + interval
        monotonic = time.monotonic
        data, found = self.backlog
        self.backlog = (b"", [])
        self.spout_frames(data, found)
        while not self.stopping:
            now = monotonic()
            max_pending = window.limit
            window_full = len(pending) >= (window.resume_below(burst) if window_full
                                           else max_pending)
            if window_full:
                window.stalled(now)
            can_emit = self.active and not window_full and not self.backpressured(now)
            wait = 0.0
            if not can_emit:
                wait = min(0.1, next_metrics - now)
            elif now < self.acks_until and pending:
                can_emit, wait = False, self.acks_until - now
            data, found = conn.poll(wait)
            if found:
                self.spout_frames(data, found)
                if em.unflushed:  # replays from fail(): out before next_tuple runs
                    self.flush()
                can_emit = can_emit and self.active and len(pending) < max_pending
            if can_emit:
                # A burst ends when next_tuple emits nothing, the window fills, or after
                # emit.batch.time or about emit.batch.size.bytes of tuples.
                start = emitted = em.emitted
                em.now = began = before = monotonic()
                most = start + max(1, int(burst_bytes / em.bytes_per_emit))
                eager_until = self.eager_until
                calls = 0
                for calls in range(1, burst + 1):  # noqa: B007 - counted after the loop
                    next_tuple()
                    after = monotonic()
                    now_emitted = em.emitted
                    if now_emitted == emitted:
                        if after - before > SLOW_IDLE:
                            self.eager_until = after + EAGER_SECS
                            self.acks_until = after + min(after - before, MAX_ACK_WAIT)
                        break
                    if now_emitted >= most or len(pending) >= max_pending \
                            or after - began > burst_secs or after < eager_until:
                        break
                    emitted, before = now_emitted, after
                self.counts[NEXT_TUPLE_COUNT] += calls
                if em.ack_now:
                    acked, em.ack_now = em.ack_now, []
                    for msg_id in acked:
                        spout.ack(msg_id)
                    self.counts[ACK_COUNT] += len(acked)
                if em.emitted == start:
                    self.flush()
                    data, found = conn.poll(IDLE_WAIT)
                    if found:
                        self.spout_frames(data, found)
            self.flush()
            if now >= next_metrics:
                self.publish()
                next_metrics = now + interval

    def spout_frames(self, data: bytes, found: list, ack: Callable | None = None,
                      fail: Callable | None = None) -> None:
        """Apply what the stream manager sent a spout: completed, failed and expired
        trees go to `ack` and `fail` (the spout's own methods by default)."""
        pop = self.emitter.pending.pop
        ack = ack or self.user.ack
        fail = fail or self.user.fail
        now = time.monotonic()
        for i, (kind, _dest, start, end) in enumerate(found):
            if kind == frames.CONTROL:
                self.take_control(data, found, i)
                continue
            try:
                roots = frames.ints_from(memoryview(data)[start + frames.HEADER_SIZE:end])
            except ValueError as exc:  # not a whole number of roots
                self._malformed(f"{frames.KIND_NAMES[kind]} frame", exc)
                continue
            entries = [e for e in map(pop, roots, itertools.repeat(None)) if e is not None]
            if kind == frames.ACKED:
                self.counts[ACK_COUNT] += len(entries)
                for msg_id, _ in entries:
                    ack(msg_id)
                # Complete latency from a sample of each batch: exact counts are in
                # ack-count; the histogram only needs a representative spread.
                add = self.latency.add
                sample = entries[::max(1, len(entries) // LATENCY_SAMPLES)]
                for _, emitted_at in sample:
                    add(now - emitted_at)
                if sample:
                    self.window.acked(now - sum(e for _, e in sample) / len(sample),
                                      len(self.emitter.pending), now)
            else:
                self.counts[FAIL_COUNT if kind == frames.FAILED else TIMEOUT_COUNT] += len(entries)
                if kind == frames.FAILED and entries:  # a bolt's answer: a round trip too
                    self.window.acked(now - entries[-1][1], len(self.emitter.pending), now)
                for msg_id, _ in entries:
                    fail(msg_id)
