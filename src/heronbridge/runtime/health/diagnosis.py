"""Diagnosers, as Dhalion's (Heron's health manager) define them, and the bottleneck.

Heron's rules, from symptoms per bolt: backpressure (above the noise), execute-rate skew
and queue skew between its tasks, a growing queue, and a crash loop (restarted at least
`crashes` times within the window). Diagnoses:

| symptom set | diagnosis | resolver |
|---|---|---|
| a task crash-looping | failing task | none beyond its executor's restarts: logged with why |
| backpressure, no queue skew, no rate skew | under-provisioned | scale up |
| backpressure, queue skew, no rate skew | slow instance | restart that task |
| backpressure, queue skew, the queued task the fastest | data skew | none (see below) |

A data skew is left alone: more tasks cannot share one key of a fields grouping.
A queue growing faster than `queue.growth` bytes/s counts as backpressure to come.

Heron sees a bolt with too few tasks only once it backpressures; a topology whose spouts
are held by their in-flight window never does (detectors.py). So: when spouts are held
back or lose tuples, or a bolt's queue grows, the bottleneck is the bolt at capacity
nearest the spouts, diagnosed by the same table with capacity in place of backpressure
(one task at capacity while the others are not: a slow instance or data skew).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .config import HealthConfig
from .detectors import TUPLES_LOST, Symptom, at_capacity, held_back, queue_growing
from .sensors import ComponentView, SpoutView

UNDER_PROVISIONED = "under-provisioned"
SLOW_INSTANCE = "slow-instance"
DATA_SKEW = "data-skew"
FAILING_TASK = "failing-task"


@dataclass(frozen=True)
class Diagnosis:
    kind: str
    component: str
    task: int | None
    symptoms: str  # what was seen, in words, for the action log
    pressure: float | None = None  # ms/s of demand not served (None: the backpressure)


def _skewed(values: list[float], ratio: float) -> bool:
    return len(values) > 1 and max(values) > ratio * max(min(values), 1e-9)


def diagnose(view: ComponentView, conf: HealthConfig) -> list[Diagnosis]:
    failing = [t for t in view.tasks.values() if t.restarts >= conf.crashes]
    if failing:
        return [Diagnosis(FAILING_TASK, view.name, t.task,
                          f"restarted {t.restarts} times in the last {conf.window:.0f}s"
                          + (f"; last exception {t.exception}" if t.exception else ""))
                for t in failing]
    bp = view.backpressure
    growing = [t for t in view.tasks.values() if t.growth > conf.queue_growth]
    if bp <= conf.noise_ms and not growing:
        return []
    tasks = list(view.tasks.values())
    queue_skew = _skewed([t.queue + 1 for t in tasks], conf.queue_skew) or \
        _skewed([t.backpressure + 1 for t in tasks], conf.queue_skew)
    # Input rates as their stream managers saw them, if they report them (see sensors).
    rate = (lambda t: t.intake) if any(t.intake for t in tasks) else (lambda t: t.rate)
    rate_skew = _skewed([rate(t) for t in tasks], conf.rate_skew)
    seen = (("queue growing; " if growing else "")
            + f"backpressure {bp:.0f} ms/s over {len(tasks)} task(s); rates "
            + ", ".join(f"{t.task}:{t.rate:.0f}/s" for t in tasks) + "; intake "
            + ", ".join(f"{t.task}:{t.intake / 1024:.0f}KB/s" for t in tasks) + "; backpressure "
            + ", ".join(f"{t.task}:{t.backpressure:.0f}ms/s" for t in tasks))
    if not queue_skew:
        return [Diagnosis(UNDER_PROVISIONED, view.name, None, seen)]
    worst = max(tasks, key=lambda t: (t.backpressure, t.queue))
    if rate_skew and rate(worst) >= max(rate(t) for t in tasks) * 0.9:
        return [Diagnosis(DATA_SKEW, view.name, worst.task, seen)]
    return [Diagnosis(SLOW_INSTANCE, view.name, worst.task, seen)]


def bottleneck(bolts: dict[str, ComponentView], spouts: dict[str, SpoutView],
               order: list[str], conf: HealthConfig, seconds: float) -> Diagnosis | None:
    """The bolt at capacity nearest the spouts (`order`: bolts, upstream first), when
    demand is held back: by the spouts' signs, or its own queue growing."""
    upstream = held_back(spouts, conf, seconds)
    for name in order:
        view = bolts[name]
        busy = at_capacity(view, conf)
        if busy is None:
            continue
        growing = queue_growing(view)
        seen = upstream + ([growing] if growing is not None else [])
        if not seen:
            continue
        evidence = "; ".join([busy.evidence] + [s.evidence for s in seen])
        tasks = list(view.tasks.values())
        if _skewed([t.capacity for t in tasks], conf.rate_skew):
            worst = max(tasks, key=lambda t: (t.capacity, t.queue))
            rate = (lambda t: t.intake) if any(t.intake for t in tasks) else (lambda t: t.rate)
            kind = DATA_SKEW if _skewed([rate(t) for t in tasks], conf.rate_skew) \
                and rate(worst) >= max(rate(t) for t in tasks) * 0.9 else SLOW_INSTANCE
            return Diagnosis(kind, name, worst.task, evidence)
        return Diagnosis(UNDER_PROVISIONED, name, None, evidence,
                         _demand(view.backpressure, seen))
    return None


def _demand(backpressure: float, seen: list[Symptom]) -> float:
    """The share of demand not served, from the most telling sign: backpressure, a held
    spout or a growing queue; failing those, the tuples lost against those acked."""
    best = max([backpressure] + [s.pressure for s in seen if s.kind != TUPLES_LOST])
    if best > 0:
        return best
    return max([0.0] + [s.pressure for s in seen])


def diagnose_topology(bolts: dict[str, ComponentView], spouts: dict[str, SpoutView],
                      order: list[str], conf: HealthConfig,
                      seconds: float) -> list[Diagnosis]:
    """Heron's rules per bolt (upstream first), then the bottleneck if none of them
    already diagnosed it."""
    found = [d for name in order for d in diagnose(bolts[name], conf)]
    neck = bottleneck(bolts, spouts, order, conf, seconds)
    if neck is not None and not any(d.component == neck.component for d in found):
        found.append(neck)
        found.sort(key=lambda d: (d.kind != FAILING_TASK, order.index(d.component)))
    return found


def scaled_parallelism(view: ComponentView, ceiling: int, pressure: float | None = None) -> int:
    """Heron's ScaleUpResolver: n * (1 + bp / (1000 - bp)), the extra capacity capped at
    4x, and our ceiling; `pressure` in place of the backpressure when the bottleneck was
    found by other signs."""
    bp = min(999.0, view.backpressure if pressure is None else pressure)
    unused = min(4.0, bp / (1000.0 - bp))
    n = len(view.tasks)
    return min(ceiling, max(n + 1, math.ceil(n * (1 + unused))))
