"""Sensors: what the topology master's metrics say about each component over a sliding
window.

Per bolt task: its capacity (the share of the time it spent in `execute`, Storm's figure),
the time it held backpressure (the stream managers' `backpressure-ms/task/N`,
in ms per second, at most 1000, as Heron's BackPressureSensor), its execute rate, its
queue (the bytes its stream manager has not yet written to it) and how often it was
restarted (its incarnation) with the latest exception it raised. Its input rate is
measured where it is sure to be current: the bytes its stream manager wrote to it
(`bytes-to/task/N`); a saturated task publishes its own counters only between batches.
Its queue is kept as the series of every sample in the window, so that a queue growing
however slowly shows.

Per spout task: the time its in-flight window (max spout pending) held it, its emit,
ack, fail and timeout rates, and the lag its source reports, as a series.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from ..telemetry import (
    ACK_COUNT,
    BACKPRESSURE_MS,
    EMIT_COUNT,
    EXECUTE_COUNT,
    EXECUTE_TIME_NS,
    FAIL_COUNT,
    SOURCE_LAG,
    TIMEOUT_COUNT,
    WINDOW_HELD_MS,
)

STMGR = "__stmgr__"
BP_TASK = BACKPRESSURE_MS + "/task/"
QUEUE_TASK = "queue-bytes/task/"
BYTES_TO_TASK = "bytes-to/task/"


@dataclass
class TaskView:
    task: int
    backpressure: float = 0.0  # ms per second over the window
    rate: float = 0.0  # executes per second (from its own, possibly late, counters)
    intake: float = 0.0  # bytes per second its stream manager wrote to it
    queue: float = 0.0  # bytes waiting for it now
    growth: float = 0.0  # of its queue, bytes per second over the window
    queues: list[float] = field(default_factory=list)  # its queue at every sample
    capacity: float = 0.0  # share of the time in execute (1: always busy)
    restarts: int = 0  # within the window
    exception: str = ""  # the latest, "Class: message"


@dataclass
class ComponentView:
    name: str
    tasks: dict[int, TaskView] = field(default_factory=dict)

    @property
    def backpressure(self) -> float:
        """Heron's component figure: the tasks' ms/s summed, capped at 999."""
        return min(999.0, sum(t.backpressure for t in self.tasks.values()))

    @property
    def rate(self) -> float:
        return sum(t.rate for t in self.tasks.values())

    @property
    def capacity(self) -> float:
        """Its busiest task's."""
        return max((t.capacity for t in self.tasks.values()), default=0.0)


@dataclass
class SpoutTaskView:
    task: int
    held: float = 0.0  # ms per second its in-flight window was full
    emitted: float = 0.0  # per second, as every rate here
    acked: float = 0.0
    failed: float = 0.0
    timed_out: float = 0.0
    lags: list[float] = field(default_factory=list)  # what its source reported, per sample


@dataclass
class SpoutView:
    name: str
    tasks: dict[int, SpoutTaskView] = field(default_factory=dict)

    @property
    def held(self) -> float:
        """The mean of its tasks' ms/s (each task is held on its own)."""
        return sum(t.held for t in self.tasks.values()) / max(1, len(self.tasks))

    def total(self, what: str) -> float:
        return sum(getattr(t, what) for t in self.tasks.values())


def _delta(first: float, last: float) -> float:
    return last - first if last >= first else last  # a counter that started over


class Window:
    """The samples of the last `seconds` seconds: (when, {(component, task): sample})."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.samples: deque[tuple[float, dict[tuple[str, int, int], Any]]] = deque()

    def add(self, report: Any, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        self.samples.append((now, {(t.component, t.task_id, t.container): t
                                   for t in report.tasks}))
        while len(self.samples) > 2 and now - self.samples[1][0] >= self.seconds:
            self.samples.popleft()

    def clear(self) -> None:
        self.samples.clear()

    @property
    def span(self) -> float:
        return self.samples[-1][0] - self.samples[0][0] if len(self.samples) > 1 else 0.0

    def series(self, component: str, task: int, gauge: str) -> list[float]:
        """A task's gauge at every sample of the window that has it."""
        return [sample.gauges[gauge] for _, tasks in self.samples for (c, t, _), sample
                in tasks.items() if c == component and t == task and gauge in sample.gauges]

    def spouts(self, spouts: dict[str, tuple[int, ...]]) -> dict[str, SpoutView]:
        """A view of each spout ({name: its task ids}) over the window."""
        views = {name: SpoutView(name, {t: SpoutTaskView(t) for t in tasks})
                 for name, tasks in spouts.items()}
        if len(self.samples) < 2 or self.span <= 0:
            return views
        first, last = self.samples[0][1], self.samples[-1][1]
        for key, sample in last.items():
            component, task, _container = key
            if component not in views or task not in views[component].tasks:
                continue
            view = views[component].tasks[task]
            view.lags = self.series(component, task, SOURCE_LAG)
            before = first.get(key)
            taken = (sample.timestamp_ms - before.timestamp_ms) / 1000 \
                if before is not None else 0.0
            if taken <= 0:
                continue

            def rate(name: str, sample: Any = sample, before: Any = before,
                     taken: float = taken) -> float:
                return _delta(before.counters.get(name, 0.0),
                              sample.counters.get(name, 0.0)) / taken

            view.held = min(1000.0, rate(WINDOW_HELD_MS))
            view.emitted, view.acked = rate(EMIT_COUNT), rate(ACK_COUNT)
            view.failed, view.timed_out = rate(FAIL_COUNT), rate(TIMEOUT_COUNT)
        return views

    def components(self, bolts: dict[str, tuple[int, ...]]) -> dict[str, ComponentView]:
        """A view of each bolt ({name: its task ids}) over the window."""
        views = {name: ComponentView(name, {t: TaskView(t) for t in tasks})
                 for name, tasks in bolts.items()}
        if len(self.samples) < 2 or self.span <= 0:
            return views
        (t0, first), (t1, last) = self.samples[0], self.samples[-1]
        seconds = t1 - t0
        owner = {t: name for name, tasks in bolts.items() for t in tasks}
        for key, sample in last.items():
            component, task, _container = key
            before = first.get(key)
            if component == STMGR:
                for name, value in sample.counters.items():
                    if name.startswith(BYTES_TO_TASK):
                        target = int(name[len(BYTES_TO_TASK):])
                        if target in owner:
                            old = before.counters.get(name, 0.0) if before is not None else 0.0
                            views[owner[target]].tasks[target].intake = \
                                _delta(old, value) / seconds
                    elif name.startswith(BP_TASK):
                        target = int(name[len(BP_TASK):])
                        if target in owner:
                            old = before.counters.get(name, 0.0) if before is not None else 0.0
                            views[owner[target]].tasks[target].backpressure += min(
                                1000.0, _delta(old, value) / seconds)
                for name, value in sample.gauges.items():
                    if name.startswith(QUEUE_TASK):
                        target = int(name[len(QUEUE_TASK):])
                        if target in owner:
                            view = views[owner[target]].tasks[target]
                            view.queue = value
                            view.queues = self.series(STMGR, task, name)
                            old = before.gauges.get(name) if before is not None else None
                            if old is not None:
                                view.growth = (value - old) / seconds
                continue
            if owner.get(task) != component:
                continue
            view = views[component].tasks[task]
            if before is not None:
                # Over the task's own sample times: a busy task publishes between batches.
                taken = (sample.timestamp_ms - before.timestamp_ms) / 1000
                view.rate = _delta(before.counters.get(EXECUTE_COUNT, 0.0),
                                   sample.counters.get(EXECUTE_COUNT, 0.0)) / taken \
                    if taken > 0 else 0.0
                busy = _delta(before.counters.get(EXECUTE_TIME_NS, 0.0),
                              sample.counters.get(EXECUTE_TIME_NS, 0.0)) / 1e9
                view.capacity = min(1.0, busy / taken) if taken > 0 else 0.0
                view.restarts = max(0, sample.incarnation - before.incarnation)
            if sample.exceptions:
                latest = max(sample.exceptions, key=lambda e: e.last_ms)
                view.exception = f"{latest.class_name}: {latest.message}"[:200]
        return views
