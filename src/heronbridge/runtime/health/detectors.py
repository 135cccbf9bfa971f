"""Detectors: the signs of a component with too few tasks, each with its evidence in words.

A bolt is *at capacity* when a task spent `capacity` (0.85) of the window in `execute`.
Demand held back or lost shows elsewhere, by whatever limits the topology: a spout whose
in-flight window (max spout pending, or the latency target) was full more than
`spout.held.ms` ms per second; a spout with no such window emitting a fifth more than its
trees complete (its trees in flight piling up); timeouts and fails at `failure.ratio` of
the acks or more;
a bolt's queue growing over the window however slowly; a source whose reported lag keeps
growing; and backpressure (Heron's signal, see diagnosis.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from .config import HealthConfig
from .sensors import ComponentView, SpoutView

AT_CAPACITY = "at-capacity"
QUEUE_GROWING = "queue-growing"
SPOUT_HELD = "spout-held"
TUPLES_LOST = "tuples-lost"
IN_FLIGHT_GROWING = "in-flight-growing"
OUTPACED = 1.2  # emitted / completed trees that is more than a pipeline filling up
LAG_GROWING = "lag-growing"


@dataclass(frozen=True)
class Symptom:
    kind: str
    component: str
    evidence: str
    # The share of the demand not served, in Heron's backpressure unit (ms/s, < 1000):
    # n tasks become n * 1000 / (1000 - pressure). 0: the symptom does not tell.
    pressure: float = 0.0


def rising(series: list[float]) -> bool:
    """Growing over the window, however slowly: its later half higher on average, its
    end above its start, and never back to empty (a queue that drains now and then keeps
    up, however it jitters)."""
    if len(series) < 4:
        return False
    half = len(series) // 2
    early, late = series[:half], series[half:]
    return series[-1] > series[0] and min(late) > 0 \
        and sum(late) / len(late) > sum(early) / len(early)


def _pressure(factor: float) -> float:
    """A demand `factor` times what is served, as ms/s not served."""
    return 1000.0 * (1.0 - 1.0 / factor) if factor > 1.0 else 0.0


def at_capacity(view: ComponentView, conf: HealthConfig) -> Symptom | None:
    busy = [t for t in view.tasks.values() if t.capacity >= conf.capacity]
    if not busy:
        return None
    return Symptom(AT_CAPACITY, view.name, f"{view.name} at capacity "
                   + ", ".join(f"task {t.task} {t.capacity:.2f}" for t in view.tasks.values())
                   + f" (executing {view.rate:.0f}/s)")


def queue_growing(view: ComponentView) -> Symptom | None:
    growing = [t for t in view.tasks.values() if rising(t.queues)]
    if not growing:
        return None
    intake = sum(t.intake for t in view.tasks.values())
    growth = sum(max(0.0, t.growth) for t in growing)
    return Symptom(QUEUE_GROWING, view.name, f"{view.name}'s queue growing "
                   + ", ".join(f"task {t.task} {t.queues[0] / 1024:.0f} -> "
                               f"{t.queues[-1] / 1024:.0f} KB" for t in growing)
                   + f" ({growth / 1024:.1f} KB/s, taken {intake / 1024:.1f} KB/s)",
                   _pressure((intake + growth) / intake) if intake > 0 else 0.0)


def spout_held(view: SpoutView, conf: HealthConfig) -> Symptom | None:
    if view.held < conf.held_ms:
        return None
    return Symptom(SPOUT_HELD, view.name, f"{view.name} held by its in-flight window "
                   f"{view.held:.0f} ms/s (emitting {view.total('emitted'):.0f}/s)",
                   min(999.0, view.held))


def in_flight_growing(view: SpoutView) -> Symptom | None:
    """Trees emitted faster than they complete (acked, failed or timed out): what its
    spout offers over what the topology serves, when nothing holds the spout back."""
    acked = view.total("acked")
    done = acked + view.total("failed") + view.total("timed_out")
    emitted = view.total("emitted")
    if not done or emitted < OUTPACED * done:
        return None
    return Symptom(IN_FLIGHT_GROWING, view.name, f"{view.name} emitting {emitted:.0f}/s, "
                   f"its trees completing {done:.0f}/s ({acked:.0f}/s acked)",
                   _pressure(emitted / acked) if acked > 0 else 999.0)


def tuples_lost(view: SpoutView, conf: HealthConfig, seconds: float) -> Symptom | None:
    acked = view.total("acked")
    lost = view.total("failed") + view.total("timed_out")
    if lost * seconds < 1 or lost < conf.failure_ratio * acked:
        return None
    return Symptom(TUPLES_LOST, view.name, f"{view.name}: {view.total('timed_out'):.1f}/s "
                   f"timed out and {view.total('failed'):.1f}/s failed against "
                   f"{acked:.1f}/s acked",
                   _pressure((acked + lost) / acked) if acked > 0 else 999.0)


def lag_growing(view: SpoutView) -> Symptom | None:
    growing = [t for t in view.tasks.values() if rising(t.lags)]
    if not growing:
        return None
    return Symptom(LAG_GROWING, view.name, f"{view.name}'s source lag growing "
                   + ", ".join(f"task {t.task} {t.lags[0]:.0f} -> {t.lags[-1]:.0f}"
                               for t in growing))


def held_back(spouts: dict[str, SpoutView], conf: HealthConfig, seconds: float) -> list[Symptom]:
    """The spouts' signs of demand held back or lost."""
    found = []
    for view in spouts.values():
        for symptom in (spout_held(view, conf), in_flight_growing(view),
                        tuples_lost(view, conf, seconds), lag_growing(view)):
            if symptom is not None:
                found.append(symptom)
    return found
