"""Time series for the page's charts, from a topology's history: per component (or per
task, on demand), one value per interval between two kept points, in the finest
resolution that covers the window (every sample for 15 minutes, a minute for 3 hours,
five minutes for a day). The health manager's actions and `update`s come with them, to
be marked on the time axis."""

from __future__ import annotations

from typing import Any

from heronbridge.runtime.telemetry import NUM_BUCKETS, Histogram

from .history import Point
from .stats import COLUMNS, STMGR, WIDTH
from .tracker import Topology

WINDOWS = {"900": 900.0, "10800": 10800.0, "86400": 86400.0}  # what the history keeps
DEFAULT_WINDOW = "900"

# (key, title, unit): what each chart shows.
METRICS = (
    ("emitted", "emitted", "tuples/s"),
    ("executed", "executed", "tuples/s"),
    ("execute_ms", "execute latency", "ms"),
    ("complete_p50_ms", "complete latency p50", "ms"),
    ("complete_p99_ms", "complete latency p99", "ms"),
    ("capacity", "capacity", "share of time"),
    ("backpressure", "backpressure time", "share of time"),
    ("restarts", "restarts", "count"),
    ("memory_mb", "memory", "MiB"),
)
_I = {name: i for i, name in enumerate(COLUMNS)}
_RESTARTS, _RSS = len(COLUMNS), len(COLUMNS) + 1


def series(t: Topology, window: str, now: float, task: int | None = None) -> dict[str, Any]:
    """{"window", "times", "lines": {label: {metric: [value or None per time]}}, "metrics",
    "events"}: lines per component, or the one task's."""
    seconds = WINDOWS.get(window)
    if seconds is None:
        msg = f"expected a window of {', '.join(WINDOWS)} seconds, received {window!r}"
        raise ValueError(msg)
    points = t.history.between(now - seconds, now)
    if task is None:
        names = [n for n in t.kinds]
        member = lambda key: key[0] if key[0] in t.kinds else None  # noqa: E731
    else:
        names = [f"task {task}"]
        member = lambda key: names[0] if key[1] == task and key[0] != STMGR else None  # noqa: E731
    lines: dict[str, dict[str, list]] = {n: {m[0]: [] for m in METRICS} for n in names}
    times: list[float] = []
    for before, after in zip(points, points[1:], strict=False):
        dt = after.ts - before.ts
        if dt <= 0:
            continue
        times.append(round(after.ts, 1))
        grouped = _group(before, after, member)
        for name in names:
            values = _values(grouped.get(name), dt)
            if task is None:
                p50, p99 = _percentiles(before, after, name)
                values["complete_p50_ms"], values["complete_p99_ms"] = p50, p99
            for key, _, _ in METRICS:
                lines[name][key].append(values.get(key))
    return {"window": window, "start": now - seconds, "end": now, "times": times,
            "lines": lines, "events": events(t, now - seconds),
            "metrics": [{"key": k, "title": title, "unit": unit} for k, title, unit in METRICS]}


def _group(before: Point, after: Point, member: Any) -> dict[str, list]:
    """The (previous row, row) of each task present in both points, by line."""
    old = before.rows(WIDTH)
    out: dict[str, list] = {}
    for key, row in after.rows(WIDTH).items():
        name = member(key)
        prev = old.get(key)
        if name is not None and prev is not None:
            out.setdefault(name, []).append((prev, row))
    return out


def _values(pairs: list | None, dt: float) -> dict[str, float | None]:
    if not pairs:
        return {}

    def delta(prev: Any, row: Any, column: str) -> float:
        i = _I[column]
        return max(0.0, row[i] - prev[i])  # a counter that went back: a new metrics manager

    emitted = sum(delta(p, r, "emitted") for p, r in pairs)
    executed = sum(delta(p, r, "executed") for p, r in pairs)
    exec_ns = sum(delta(p, r, "exec_ns") for p, r in pairs)
    lat_sum = sum(delta(p, r, "lat_sum_ms") for p, r in pairs)
    lat_count = sum(delta(p, r, "lat_count") for p, r in pairs)
    return {
        "emitted": round(emitted / dt, 2), "executed": round(executed / dt, 2),
        "execute_ms": round(exec_ns / executed / 1e6, 4) if executed else None,
        # a task's own line has no percentiles kept: its mean instead, in p50's place
        "complete_p50_ms": round(lat_sum / lat_count, 4) if lat_count else None,
        "capacity": round(max(delta(p, r, "exec_ns") / (dt * 1e9) for p, r in pairs), 4),
        "backpressure": round(min(1.0, max(delta(p, r, "bp_ms") for p, r in pairs)
                                  / (dt * 1000)), 4),
        "restarts": sum(r[_RESTARTS] for _, r in pairs),
        "memory_mb": round(sum(r[_RSS] for _, r in pairs) / 2**20, 2),
    }


def _percentiles(before: Point, after: Point, component: str) -> tuple[Any, Any]:
    if component not in after.latencies:
        return None, None
    old = before.histogram(component, NUM_BUCKETS)
    new = after.histogram(component, NUM_BUCKETS)
    hist = Histogram(int(max(0.0, n - o)) for n, o in zip(new, old, strict=True))
    p50, p99 = hist.percentile(0.5), hist.percentile(0.99)
    return (None if p50 is None else round(p50 * 1000, 4),
            None if p99 is None else round(p99 * 1000, 4))


def events(t: Topology, since: float) -> list[dict[str, Any]]:
    """The health manager's actions and the updates seen since `since`, oldest first."""
    found = [{"time": round(a.time, 1), "kind": "health",
              "label": f"health: {a.action} {a.component or ''}"
                       f"{'' if a.task is None or a.task < 0 else f' task {a.task}'}".strip(),
              "detail": a.detail or a.why or ""}
             for a in t.nodes.actions if a.time >= since]
    found += [{"time": round(when, 1), "kind": "update", "label": "update",
               "detail": f"packing plan {packing}"}
              for when, packing in t.updates if when >= since]
    return sorted(found, key=lambda e: e["time"])
