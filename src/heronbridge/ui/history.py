"""A topology's metric history: rolling and bounded, at three resolutions.

Each point holds every task's cumulative counters at one sampling time. A window's value
is the newest point minus the point at the window's start, so a window needs only the
points around its start: every sample for the last 15 minutes, one a minute for three
hours, one every five minutes for a day. At 10 tasks that is under 1 MB per topology.
A point also keeps each spout component's complete-latency histogram (its non-empty
buckets only), so that a chart can show percentiles between any two points.
"""

from __future__ import annotations

import bisect
import threading
from array import array
from collections import deque
from dataclasses import dataclass, field

# (seconds kept, seconds between points): 0 keeps every sample.
TIERS = ((15 * 60, 0), (3 * 3600 + 120, 60), (24 * 3600 + 600, 300))

Key = tuple[str, int, int]  # (component, task, container)


@dataclass(frozen=True)
class Point:
    ts: float  # wall clock, seconds
    keys: tuple[Key, ...]  # the tasks, in the order of `values`' rows
    values: array  # len(keys) rows of `width` values
    latencies: dict[str, array] = field(default_factory=dict)  # component -> bucket, count...

    def histogram(self, component: str, size: int) -> list[float]:
        """The component's cumulative histogram, dense."""
        dense = [0.0] * size
        pairs = self.latencies.get(component)
        if pairs is not None:
            for i in range(0, len(pairs), 2):
                dense[int(pairs[i])] = pairs[i + 1]
        return dense

    def rows(self, width: int) -> dict[Key, array]:
        return {k: self.values[i * width:(i + 1) * width] for i, k in enumerate(self.keys)}


class History:
    """Points appended in time order; `at(ts)` finds the one to subtract for a window."""

    def __init__(self, width: int) -> None:
        self.width = width
        self.tiers: list[deque] = [deque() for _ in TIERS]
        self._lock = threading.Lock()
        self._index: dict[tuple[Key, ...], tuple[Key, ...]] = {}

    def append(self, ts: float, rows: dict[Key, tuple[float, ...]],
               latencies: dict[str, list[float]] | None = None) -> None:
        keys = tuple(sorted(rows))
        keys = self._index.setdefault(keys, keys)  # points share one tuple per layout
        values = array("d")
        for k in keys:
            values.extend(rows[k])
        sparse = {name: array("d", [x for b, c in enumerate(counts) if c for x in (b, c)])
                  for name, counts in (latencies or {}).items()}
        point = Point(ts, keys, values, sparse)
        with self._lock:
            for tier, (keep, step) in zip(self.tiers, TIERS, strict=True):
                if not step or not tier or ts - tier[-1].ts >= step:
                    tier.append(point)
                while tier and ts - tier[0].ts > keep:
                    tier.popleft()

    def latest(self) -> Point | None:
        with self._lock:
            return self.tiers[0][-1] if self.tiers[0] else None

    def oldest(self) -> Point | None:
        with self._lock:
            for tier in reversed(self.tiers):
                if tier:
                    return tier[0]
        return None

    def _tier(self, ts: float) -> deque:
        """The finest tier reaching back to `ts`, or to the oldest point kept."""
        kept = [t for t in self.tiers if t]
        if not kept:
            return deque()
        ts = max(ts, min(t[0].ts for t in kept))
        return next(t for t in kept if t[0].ts <= ts)

    def at(self, ts: float) -> Point | None:
        """The newest point at or before `ts`, from the finest tier reaching back that far;
        the oldest point kept when the history is younger than that."""
        with self._lock:
            tier = self._tier(ts)
            if not tier:
                return None
            i = bisect.bisect_right([p.ts for p in tier], ts) - 1
            return tier[max(i, 0)]

    def between(self, start: float, end: float) -> list[Point]:
        """The points in [start, end], at the finest resolution that covers `start`."""
        with self._lock:
            return [p for p in self._tier(start) if start <= p.ts <= end]

    def size(self) -> int:
        with self._lock:
            return sum(len(t) for t in self.tiers)
