"""Metric names and the latency histogram shared by instances, managers and the CLI."""

from __future__ import annotations

import math
import time
import traceback
from collections.abc import Iterable

from .proto.control_pb2 import ExceptionRecord

EMIT_COUNT = "emit-count"
ACK_COUNT = "ack-count"
FAIL_COUNT = "fail-count"
TIMEOUT_COUNT = "timeout-count"
EXECUTE_COUNT = "execute-count"
EXECUTE_TIME_NS = "execute-time-ns"
NEXT_TUPLE_COUNT = "next-tuple-count"
ERROR_COUNT = "error-count"
CRASH_COUNT = "crash-count"  # the task's process ended by an exception or a failing exit
BACKPRESSURE_MS = "backpressure-ms"
WINDOW_HELD_MS = "window-held-ms"  # a spout's time with its in-flight window full
WINDOW_LIMIT = "window-limit"  # a spout's in-flight window, in trees (absent: no limit)
SOURCE_LAG = "source-lag"  # what a spout's source holds that it has not read (Spout.source_lag)
PENDING = "pending"
OUT_QUEUE_BYTES = "out-queue-bytes"
COMPLETE_LATENCY = "complete-latency"
RSS_BYTES = "rss-bytes"  # the task's process and its children (a multilang subprocess)
UPTIME_SECS = "uptime-secs"  # since this incarnation's component was opened or prepared
# Kept by the metrics manager over every sample of a task, every incarnation included.
PEAK_RSS_BYTES = "peak-rss-bytes"
LONGEST_UPTIME_SECS = "longest-uptime-secs"

# Stream manager metrics.
TUPLES_ROUTED = "frames-routed"
BYTES_ROUTED = "bytes-routed"
DROPPED_FRAMES = "dropped-frames"  # for a task that was not connected, given up
HELD_FRAMES = "held-frames"  # for a task that was not connected, kept until it was back
HELD_BYTES = "held-bytes"
DISCARDED_FRAMES = "discarded-frames"  # sent before the current rollback (effectively-once)
MALFORMED_FRAMES = "malformed-frames"  # skipped, from a peer that sent one
TREES_ACKED = "trees-acked"
TREES_FAILED = "trees-failed"
TREES_EXPIRED = "trees-expired"
TREES_PENDING = "trees-pending"
MAX_CONNECTION_BUFFER = "max-connection-buffer-bytes"

# From the executor, for a task it waits to restart (see scheduler.executor).
RESTART_WAIT_SECS = "restart-wait-secs"

MAX_EXCEPTIONS = 10  # distinct stack traces kept per task

BUCKETS_PER_OCTAVE = 4
NUM_BUCKETS = 4 * 32  # up to 2^32 microseconds (over an hour)


class Histogram:
    """Log-scale latency histogram: 4 buckets per power of two of microseconds."""

    __slots__ = ("counts",)

    def __init__(self, counts: Iterable[int] | None = None) -> None:
        self.counts = list(counts) if counts is not None else [0] * NUM_BUCKETS
        if len(self.counts) < NUM_BUCKETS:
            self.counts += [0] * (NUM_BUCKETS - len(self.counts))

    def add(self, seconds: float) -> None:
        us = seconds * 1e6
        b = int(math.log2(us) * BUCKETS_PER_OCTAVE) if us > 1 else 0
        self.counts[b if b < NUM_BUCKETS else NUM_BUCKETS - 1] += 1

    def merge(self, other: Histogram | Iterable[int]) -> None:
        counts = other.counts if isinstance(other, Histogram) else list(other)
        for i, c in enumerate(counts[:NUM_BUCKETS]):
            self.counts[i] += c

    @property
    def total(self) -> int:
        return sum(self.counts)

    def percentile(self, q: float) -> float | None:
        """The value (seconds) at quantile q in [0, 1], at the bucket's geometric middle."""
        total = self.total
        if not total:
            return None
        rank = q * (total - 1)
        seen = 0
        for b, c in enumerate(self.counts):
            seen += c
            if seen > rank:
                return 2 ** ((b + 0.5) / BUCKETS_PER_OCTAVE) / 1e6
        return 2 ** (NUM_BUCKETS / BUCKETS_PER_OCTAVE) / 1e6


class ExceptionLog:
    """The latest distinct exceptions of one task, keyed by stack trace (Heron's
    exception log): what a task reported, and what it died of.

    An error that only wraps a component's own exception (raised `from` it, to say where)
    is recorded under that exception's type and message; its stack trace keeps both. An
    error raised in another process (a multilang subprocess) carries what that process
    reported as `origin`: (type name, message, stack trace)."""

    __slots__ = ("records",)

    def __init__(self) -> None:
        self.records: dict[str, ExceptionRecord] = {}

    def add(self, error: BaseException) -> None:
        origin = getattr(error, "origin", None)
        if origin is not None:
            class_name, message, trace = origin
        else:
            trace = "".join(traceback.format_exception(error)).rstrip()
            cause = _cause(error)
            class_name, message = type(cause).__name__, str(cause)
        now = int(time.time() * 1000)
        record = self.records.pop(trace, None)  # re-inserted: the newest last
        if record is None:
            record = ExceptionRecord(class_name=class_name, message=message,
                                     stacktrace=trace, first_ms=now)
        record.last_ms = now
        record.count += 1
        self.records[trace] = record
        if len(self.records) > MAX_EXCEPTIONS:
            del self.records[next(iter(self.records))]


def _cause(error: BaseException) -> BaseException:
    """The component's own exception behind the runtime's errors that wrap it."""
    from heronbridge.errors import HeronbridgeError

    while isinstance(error, HeronbridgeError) and error.__cause__ is not None:
        error = error.__cause__
    return error


def merge_exceptions(*groups: Iterable[ExceptionRecord]) -> list[ExceptionRecord]:
    """One record per stack trace over several lists (a task's incarnations), counts
    added up; the MAX_EXCEPTIONS most recent."""
    merged: dict[str, ExceptionRecord] = {}
    for group in groups:
        for record in group:
            seen = merged.get(record.stacktrace)
            if seen is None:
                merged[record.stacktrace] = seen = ExceptionRecord()
                seen.CopyFrom(record)
                continue
            seen.count += record.count
            seen.first_ms = min(seen.first_ms, record.first_ms)
            seen.last_ms = max(seen.last_ms, record.last_ms)
    return sorted(merged.values(), key=lambda r: r.last_ms)[-MAX_EXCEPTIONS:]
