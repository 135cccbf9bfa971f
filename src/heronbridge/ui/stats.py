"""Window statistics from the topology master's reports: per task and per component.

Counters are cumulative over a task's life (the metrics manager stitches restarts), so
a window's count is the latest value minus the value at the window's start; `:all-time`
is the latest value itself. Latencies are in milliseconds, as Storm's UI shows them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from heronbridge.runtime.telemetry import (
    ACK_COUNT,
    BACKPRESSURE_MS,
    BUCKETS_PER_OCTAVE,
    COMPLETE_LATENCY,
    EMIT_COUNT,
    ERROR_COUNT,
    EXECUTE_COUNT,
    EXECUTE_TIME_NS,
    FAIL_COUNT,
    NEXT_TUPLE_COUNT,
    NUM_BUCKETS,
    PENDING,
    RSS_BYTES,
    TIMEOUT_COUNT,
)

from .history import History, Key, Point

STMGR = "__stmgr__"
ALL_TIME = ":all-time"
WINDOWS = ("600", "10800", "86400", ALL_TIME)  # Storm UI's windows, all-time last
CAPACITY_WINDOW = 600.0  # Storm computes capacity over the last 10 minutes
LIVE_WINDOW = 5.0  # what the page colours its graph by: a slow bolt shows in seconds

# The columns each point of the history keeps per task, cumulative, then the gauges it
# keeps as they were at that point (restarts so far, memory).
COLUMNS = ("emitted", "executed", "acked", "failed", "timed_out", "exec_ns", "errors",
           "bp_ms", "lat_sum_ms", "lat_count", "next_tuple")
GAUGES = ("restarts", "rss_bytes")
CUMULATIVE = len(COLUMNS)
WIDTH = CUMULATIVE + len(GAUGES)  # a history row
# Middle of each latency bucket, in milliseconds (bucket b: [2^(b/4), 2^((b+1)/4)) us).
_MID_MS = [2 ** ((b + 0.5) / BUCKETS_PER_OCTAVE) / 1000 for b in range(NUM_BUCKETS)]


def latency_sum_ms(counts: Any) -> float:
    return sum(c * _MID_MS[b] for b, c in enumerate(counts) if c and b < NUM_BUCKETS)


def task_row(task: Any) -> tuple[float, ...]:
    """A TaskMetrics' cumulative values in COLUMNS order."""
    c = task.counters
    hist = task.histograms.get(COMPLETE_LATENCY) if task.histograms else None
    counts = list(hist.counts) if hist is not None else []
    return (c.get(EMIT_COUNT, 0.0), c.get(EXECUTE_COUNT, 0.0), c.get(ACK_COUNT, 0.0),
            c.get(FAIL_COUNT, 0.0), c.get(TIMEOUT_COUNT, 0.0), c.get(EXECUTE_TIME_NS, 0.0),
            c.get(ERROR_COUNT, 0.0), c.get(BACKPRESSURE_MS, 0.0), latency_sum_ms(counts),
            float(sum(counts)), c.get(NEXT_TUPLE_COUNT, 0.0))


def report_rows(report: Any) -> dict[Key, tuple[float, ...]]:
    """Each task's history row: its cumulative COLUMNS, then its GAUGES."""
    return {(t.component, t.task_id, t.container):
            task_row(t) + (float(t.incarnation), t.gauges.get(RSS_BYTES, 0.0))
            for t in report.tasks}


def report_latencies(report: Any) -> dict[str, list[float]]:
    """Per component: its tasks' complete-latency histograms summed (cumulative)."""
    out: dict[str, list[float]] = {}
    for t in report.tasks:
        hist = t.histograms.get(COMPLETE_LATENCY) if t.histograms else None
        if hist is None or not any(hist.counts):
            continue
        total = out.setdefault(t.component, [0.0] * NUM_BUCKETS)
        for b, c in enumerate(hist.counts[:NUM_BUCKETS]):
            total[b] += c
    return out


@dataclass
class TaskStats:
    """One task over one window."""

    component: str
    task: int
    container: int
    seconds: float  # how long the window covered
    values: dict[str, float]  # COLUMNS, counted over the window
    rss_bytes: float = 0.0
    pending: float = 0.0
    restarts: int = 0
    is_spout: bool = False

    def __getattr__(self, name: str) -> float:
        try:
            return self.__dict__["values"][name]
        except KeyError:
            raise AttributeError(name) from None

    @property
    def failed_total(self) -> float:
        """Storm counts a spout tuple that timed out as failed."""
        return self.failed + (self.timed_out if self.is_spout else 0.0)

    @property
    def execute_ms(self) -> float | None:
        return self.exec_ns / self.executed / 1e6 if self.executed else None

    @property
    def complete_ms(self) -> float | None:
        return self.lat_sum_ms / self.lat_count if self.lat_count else None

    @property
    def capacity(self) -> float:
        return self.exec_ns / (self.seconds * 1e9) if self.seconds > 0 else 0.0

    @property
    def bp_ratio(self) -> float:
        """The share of the window this task's output was held back."""
        return min(1.0, self.bp_ms / (self.seconds * 1000)) if self.seconds > 0 else 0.0

    def rate(self, column: str) -> float:
        return self.values[column] / self.seconds if self.seconds > 0 else 0.0


@dataclass
class ComponentStats:
    name: str
    kind: str  # "spout" | "bolt"
    tasks: list[TaskStats] = field(default_factory=list)

    def total(self, column: str) -> float:
        return sum(t.values[column] for t in self.tasks)

    @property
    def failed_total(self) -> float:
        return sum(t.failed_total for t in self.tasks)

    @property
    def execute_ms(self) -> float | None:
        executed = self.total("executed")
        return self.total("exec_ns") / executed / 1e6 if executed else None

    @property
    def complete_ms(self) -> float | None:
        count = self.total("lat_count")
        return self.total("lat_sum_ms") / count if count else None

    @property
    def capacity(self) -> float:
        """Storm's: the busiest executor's."""
        return max((t.capacity for t in self.tasks), default=0.0)

    @property
    def bp_ratio(self) -> float:
        return max((t.bp_ratio for t in self.tasks), default=0.0)

    @property
    def restarts(self) -> int:
        return sum(t.restarts for t in self.tasks)

    @property
    def rss_bytes(self) -> float:
        return sum(t.rss_bytes for t in self.tasks)

    def rate(self, column: str) -> float:
        seconds = max((t.seconds for t in self.tasks), default=0.0)
        return self.total(column) / seconds if seconds > 0 else 0.0


def window_seconds(window: str | None) -> float | None:
    """None for all-time; Storm's windows and any other whole number of seconds."""
    if window in (None, "", ALL_TIME):
        return None
    try:
        seconds = float(window)
    except ValueError:
        return None
    return seconds if seconds > 0 else None


def task_stats(report: Any, history: History, uptime: float, window: float | None,
               now: float, spouts: set[str]) -> list[TaskStats]:
    """Every task's stats over the last `window` seconds (None: its whole life), from the
    master's latest report and the history's point at the window's start."""
    base: Point | None = None
    covered = uptime
    if window is not None and uptime > window:
        base = history.at(now - window)
        covered = window if base is None else max(0.0, now - base.ts)
    base_rows = base.rows(WIDTH) if base is not None else {}
    out = []
    for task in report.tasks:
        key = (task.component, task.task_id, task.container)
        row = task_row(task)
        before = base_rows.get(key)
        before = before[:CUMULATIVE] if before is not None else None
        if before is not None and all(a >= b for a, b in zip(row, before, strict=True)):
            row = tuple(a - b for a, b in zip(row, before, strict=True))
        # else: the task is new since, or its counters restarted (a new metrics manager)
        out.append(TaskStats(
            component=task.component, task=task.task_id, container=task.container,
            seconds=covered, values=dict(zip(COLUMNS, row, strict=True)),
            rss_bytes=task.gauges.get(RSS_BYTES, 0.0), pending=task.gauges.get(PENDING, 0.0),
            restarts=task.incarnation, is_spout=task.component in spouts))
    return out


def by_component(tasks: list[TaskStats], kinds: dict[str, str]) -> dict[str, ComponentStats]:
    """Per component, in the logical plan's order; the stream managers' rows left out."""
    out = {name: ComponentStats(name, kind) for name, kind in kinds.items()}
    for t in sorted(tasks, key=lambda t: t.task):
        if t.component in out:
            out[t.component].tasks.append(t)
    return out
