"""What the health scenarios share: a topology of a steady spout and one bolt, with a
quick health manager, and a probe of the bolt's rate and the backpressure over time."""

from __future__ import annotations

import time

from health_components import RateSpout

from heronbridge.runtime import Grouping, TopologyBuilder, control
from heronbridge.runtime.health.actions import read_actions
from heronbridge.runtime.plan.codec import topology_from_proto
from heronbridge.runtime.plan.logical import SHUFFLE
from heronbridge.runtime.statemgr import TOPOLOGIES
from heronbridge.runtime.telemetry import BACKPRESSURE_MS, EXECUTE_COUNT

QUICK_HEALTH = {
    "heronbridge.health.interval.secs": 1.0, "heronbridge.health.window.secs": 4.0,
    "heronbridge.health.cooldown.secs": 5.0, "heronbridge.health.max.parallelism": 6,
    "heronbridge.metrics.interval.secs": 0.5,
    # Small buffers: a bolt that falls behind backpressures in a second, not a minute.
    "heronbridge.backpressure.high.watermark.bytes": 32 << 10,
    "heronbridge.backpressure.low.watermark.bytes": 8 << 10,
}


def topology(name: str, bolt: type, rate: int, grouping: Grouping | None = None,
             par: int = 1, **config: object):
    b = TopologyBuilder(name, {**QUICK_HEALTH, "test.rate": rate, **config})
    spout = b.spout("source", RateSpout)
    b.bolt("work", bolt, inputs={spout: grouping or Grouping(SHUFFLE)}, par=par)
    return b.build()


class Probe:
    """Samples the master's metrics: the bolt's executes per second and the stream
    managers' backpressure (ms per second) since the previous sample."""

    def __init__(self, state, name: str, component: str = "work") -> None:
        self.state, self.name, self.component = state, name, component
        self.points: list[tuple[float, float, float]] = []  # (t, rate, backpressure ms/s)
        self._last: tuple[float, float, float] | None = None
        self.began = time.monotonic()

    def sample(self) -> None:
        report = control.metrics(self.state, self.name)
        executed = sum(t.counters.get(EXECUTE_COUNT, 0) for t in report.tasks
                       if t.component == self.component)
        bp = sum(t.counters.get(BACKPRESSURE_MS, 0) for t in report.tasks
                 if t.component == "__stmgr__")
        now = time.monotonic() - self.began
        if self._last is not None:
            dt = now - self._last[0]
            if dt > 0:
                self.points.append((now, max(0.0, executed - self._last[1]) / dt,
                                    max(0.0, bp - self._last[2]) / dt))
        self._last = (now, executed, bp)

    def mean(self, since: float, until: float | None = None) -> tuple[float, float]:
        """Mean (rate, backpressure ms/s) of the points in [since, until]."""
        chosen = [p for p in self.points if p[0] >= since and (until is None or p[0] <= until)]
        if not chosen:
            return 0.0, 0.0
        return (sum(p[1] for p in chosen) / len(chosen), sum(p[2] for p in chosen) / len(chosen))


def parallelism(state, name: str, component: str = "work") -> int:
    return topology_from_proto(state.get(TOPOLOGIES, name)).components[component].parallelism


def actions(state, name: str) -> list:
    return read_actions(state, name)


def first_actions(run, state, name: str, timeout: float = 60.0) -> list:
    """The action log once it has an entry (or empty after `timeout` seconds)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not actions(state, name):
        time.sleep(0.5)
        run.check()
    return actions(state, name)
