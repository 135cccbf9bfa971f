"""What the CLI shows of a running topology: a live status line and final totals."""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from rich.table import Table

from heronbridge.runtime.health.manager import COMPONENT as HEALTH
from heronbridge.runtime.statemgr import StateManager
from heronbridge.runtime.telemetry import (
    ACK_COUNT,
    BACKPRESSURE_MS,
    COMPLETE_LATENCY,
    DROPPED_FRAMES,
    EMIT_COUNT,
    ERROR_COUNT,
    EXECUTE_COUNT,
    FAIL_COUNT,
    PEAK_RSS_BYTES,
    RSS_BYTES,
    TIMEOUT_COUNT,
    Histogram,
)

STMGR = "__stmgr__"
ACTIONS_SHOWN = 10  # per topology, the latest


@dataclass
class ComponentTotals:
    name: str
    tasks: int = 0
    counters: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    latency: Histogram = field(default_factory=Histogram)
    max_rss: float = 0.0

    def add(self, counters: dict[str, float], gauges: dict[str, float],
            histograms: dict[str, Any]) -> None:
        self.tasks += 1
        for name, value in counters.items():
            self.counters[name] += value
        self.max_rss = max(self.max_rss, gauges.get(RSS_BYTES, 0),
                           gauges.get(PEAK_RSS_BYTES, 0))
        hist = histograms.get(COMPLETE_LATENCY)
        if hist:
            self.latency.merge(hist)


def totals_from_samples(samples: dict) -> dict[str, ComponentTotals]:
    """Per-component totals from sink records (see metrics_manager.sink)."""
    out: dict[str, ComponentTotals] = {}
    for (component, _task, _container), record in sorted(samples.items()):
        hists = {}
        for name, sparse in record.get("histograms", {}).items():
            counts = Histogram()
            for bucket, count in sparse.items():
                counts.counts[int(bucket)] = count
            hists[name] = counts
        out.setdefault(component, ComponentTotals(component)).add(
            record["counters"], record["gauges"], hists)
    return out


def totals_from_report(report: Any) -> dict[str, ComponentTotals]:
    """Per-component totals from the topology master's metrics report."""
    out: dict[str, ComponentTotals] = {}
    for task in report.tasks:
        hists = {n: Histogram(h.counts) for n, h in task.histograms.items()}
        out.setdefault(task.component, ComponentTotals(task.component)).add(
            dict(task.counters), dict(task.gauges), hists)
    return out


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:.1f}"


def dropped(totals: dict[str, ComponentTotals]) -> int:
    """Frames the stream managers dropped because their task was not connected."""
    stmgr = totals.get(STMGR)
    return int(stmgr.counters.get(DROPPED_FRAMES, 0)) if stmgr is not None else 0


def drops_before(totals: dict[str, ComponentTotals], at_stop: dict[str, ComponentTotals]) -> None:
    """Count only the frames dropped before the shutdown began (`at_stop`): tasks
    stopping one after another drop what is still on its way to them, which says
    nothing about the run."""
    stmgr = totals.get(STMGR)
    if stmgr is not None:
        stmgr.counters[DROPPED_FRAMES] = min(dropped(totals), dropped(at_stop))


def totals_table(title: str, totals: dict[str, ComponentTotals], seconds: float) -> Table:
    lost = dropped(totals)
    caption = (f"stream managers dropped {lost:,} frames for tasks that were down; the "
               "tracked trees among them failed back to their spouts" if lost else None)
    table = Table(title=title, caption=caption)
    for col in ("component", "tasks", "emitted", "executed", "acked", "failed", "timed out",
                "errors", "exec/s", "complete p50 ms", "complete p99 ms", "dropped",
                "max RSS MB"):
        table.add_column(col, justify="left" if col == "component" else "right")
    for name in sorted(totals, key=lambda n: (n == STMGR, n)):
        if name == HEALTH:
            continue  # its counters are actions, shown by `list`
        t = totals[name]
        c = t.counters
        if name == STMGR:
            table.add_row(name, str(t.tasks), "", "", "", "", "", "", "", "", "", f"{lost:,}",
                          f"{t.max_rss / 2**20:.0f}")
            continue
        rate = c.get(EXECUTE_COUNT, 0) / seconds if seconds > 0 else 0
        table.add_row(name, str(t.tasks), f"{c.get(EMIT_COUNT, 0):,.0f}",
                      f"{c.get(EXECUTE_COUNT, 0):,.0f}", f"{c.get(ACK_COUNT, 0):,.0f}",
                      f"{c.get(FAIL_COUNT, 0):,.0f}", f"{c.get(TIMEOUT_COUNT, 0):,.0f}",
                      f"{c.get(ERROR_COUNT, 0):,.0f}", f"{rate:,.0f}",
                      _ms(t.latency.percentile(0.5)), _ms(t.latency.percentile(0.99)), "",
                      f"{t.max_rss / 2**20:.0f}")
    return table


class RateLine:
    """One status line: per-component throughput since the previous sample."""

    def __init__(self) -> None:
        self.previous: dict[str, float] = {}
        self.previous_time: float | None = None

    def render(self, name: str, elapsed: float, now: float,
               totals: dict[str, ComponentTotals]) -> str:
        parts = [f"{name} {elapsed:5.0f}s"]
        dt = now - self.previous_time if self.previous_time is not None else None
        for comp in sorted(totals):
            if comp in (STMGR, HEALTH):
                continue
            c = totals[comp].counters
            count = c.get(EXECUTE_COUNT, 0) or c.get(EMIT_COUNT, 0)
            before = self.previous.get(comp)
            if dt and before is not None:
                rate = (count - before) / dt
            else:  # the first sample: the average since the topology started
                rate = count / elapsed if elapsed > 0 else 0.0
            self.previous[comp] = count
            parts.append(f"{comp} {rate:,.0f}/s")
        stmgr = totals.get(STMGR)
        if stmgr is not None:
            parts.append(f"backpressure {stmgr.counters.get(BACKPRESSURE_MS, 0) / 1000:.1f}s")
            if dropped(totals):
                parts.append(f"dropped {dropped(totals):,} frames (a task was down)")
        self.previous_time = now
        return " | ".join(parts)


def actions_table(statemgr: StateManager, names: list[str]) -> Table | None:
    """The health manager's latest actions, per topology (None: no action yet)."""
    from heronbridge.runtime.health.actions import read_actions

    table = Table(title="health manager actions (latest first)")
    for col in ("topology", "time", "action", "component", "task", "diagnosis", "evidence",
                "done"):
        table.add_column(col)
    shown = False
    for name in names:
        for action in reversed(read_actions(statemgr, name)[-ACTIONS_SHOWN:]):
            shown = True
            table.add_row(name, time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(action.time)),
                          action.action, action.component,
                          "" if action.task is None else str(action.task), action.diagnosis,
                          action.why, action.detail)
    return table if shown else None
