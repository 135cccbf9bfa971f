"""Detectors and diagnosers, as Dhalion's (Heron's health manager) define them.

Symptoms, per bolt: backpressure (above the noise), execute-rate skew and queue skew
between its tasks, a growing queue, and a crash loop (restarted at least
`crashes` times within the window). Diagnoses:

| symptom set | diagnosis | resolver |
|---|---|---|
| a task crash-looping | failing task | none beyond its executor's restarts: logged with why |
| backpressure, no queue skew, no rate skew | under-provisioned | scale up |
| backpressure, queue skew, no rate skew | slow instance | restart that task |
| backpressure, queue skew, the queued task the fastest | data skew | none (see below) |

A data skew is left alone: more tasks cannot share one key of a fields grouping.
A queue growing faster than `queue.growth` bytes/s counts as backpressure to come.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .config import HealthConfig
from .sensors import ComponentView

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


def scaled_parallelism(view: ComponentView, ceiling: int) -> int:
    """Heron's ScaleUpResolver: n * (1 + bp / (1000 - bp)), the extra capacity capped at
    4x, and our ceiling."""
    bp = view.backpressure
    unused = min(4.0, bp / (1000.0 - bp))
    n = len(view.tasks)
    return min(ceiling, max(n + 1, math.ceil(n * (1 + unused))))
