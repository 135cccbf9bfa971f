"""What the probe files of one run say about a window of time: sink tuples/s, complete
latency percentiles, and a timeline for the plots."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from heronbridge.runtime.telemetry import Histogram


@dataclass
class Lines:
    """Every task's probe lines, as (time, line), by (component, task)."""

    tasks: dict[tuple[str, int], list[tuple[float, dict[str, Any]]]] = field(
        default_factory=dict)

    @classmethod
    def read(cls, folder: Path) -> Lines:
        tasks: dict[tuple[str, int], list[tuple[float, dict[str, Any]]]] = {}
        for path in sorted(Path(folder).glob("*.jsonl")):
            key = None
            for text in path.read_text().splitlines():
                try:
                    line = json.loads(text)
                except json.JSONDecodeError:
                    continue  # a line cut short when the process was killed
                if line.get("start"):
                    key = (line["component"], line["task"])
                    tasks.setdefault(key, [])
                elif key is not None:
                    tasks[key].append((line["t"], line))
        for lines in tasks.values():
            lines.sort(key=lambda tl: tl[0])
        return cls(tasks)

    def of(self, components: set[str]) -> list[list[tuple[float, dict[str, Any]]]]:
        return [lines for (c, _), lines in sorted(self.tasks.items()) if c in components]

    def first(self, components: set[str], key: str) -> float | None:
        """When the first of these components' lines showed `key` above zero."""
        times = [t for lines in self.of(components) for t, line in lines if line.get(key)]
        return min(times) if times else None


@dataclass
class Window:
    begin: float  # wall clock
    end: float
    sink_tuples: int = 0
    sink_per_s: float = 0.0
    spout_emits: int = 0
    acks: int = 0
    fails: int = 0
    latency: Histogram = field(default_factory=Histogram)

    def percentile_ms(self, q: float) -> float | None:
        value = self.latency.percentile(q)
        return None if value is None else value * 1000


def window(lines: Lines, begin: float, end: float, sink: set[str], spouts: set[str]) -> Window:
    """The tasks' lines whose intervals ended inside [begin, end]. Each task's rate is
    its count over the span its lines cover, so a task that started late or wrote its
    last line early is not diluted; the sink's rate is the sum of its tasks' rates."""
    out = Window(begin, end)
    for task_lines in lines.of(sink):
        inside = [(t, line) for t, line in task_lines if begin < t <= end]
        before = [t for t, _ in task_lines if t <= begin]
        if not inside:
            continue
        count = sum(line["in"] for _, line in inside)
        start = before[-1] if before else inside[0][0]
        counted = count if before else count - inside[0][1]["in"]
        span = inside[-1][0] - start
        out.sink_tuples += count
        if span > 0:
            out.sink_per_s += counted / span
    for task_lines in lines.of(spouts):
        for t, line in task_lines:
            if begin < t <= end:
                out.spout_emits += line["emit"]
                out.acks += line["ack"]
                out.fails += line["fail"]
                if "lat" in line:
                    out.latency.merge(line["lat"])
    return out


def timeline(lines: Lines, sink: set[str], origin: float,
             step: float = 0.5) -> list[tuple[float, float]]:
    """(seconds since `origin`, sink tuples/s) per `step`."""
    buckets: dict[int, int] = {}
    for task_lines in lines.of(sink):
        for t, line in task_lines:
            buckets[int((t - origin) // step)] = buckets.get(int((t - origin) // step), 0) \
                + line["in"]
    return [(b * step, n / step) for b, n in sorted(buckets.items()) if b >= 0]
