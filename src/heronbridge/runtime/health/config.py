"""The health manager's settings, from the topology's config."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError, where

ENABLED = "heronbridge.health"  # "on" (default) or "off"; `run/submit --health off`
INTERVAL = "heronbridge.health.interval.secs"
WINDOW = "heronbridge.health.window.secs"
COOLDOWN = "heronbridge.health.cooldown.secs"
MAX_PARALLELISM = "heronbridge.health.max.parallelism"
NOISE = "heronbridge.health.backpressure.noise.ms"  # ms/s below which backpressure is noise
RATE_SKEW = "heronbridge.health.rate.skew.ratio"
QUEUE_SKEW = "heronbridge.health.queue.skew.ratio"
QUEUE_GROWTH = "heronbridge.health.queue.growth.bytes"  # per second, a growing queue
CRASHES = "heronbridge.health.crashes"  # restarts within the window that make a crash loop
CAPACITY = "heronbridge.health.capacity"  # share of the time in execute: a bolt at capacity
HELD = "heronbridge.health.spout.held.ms"  # ms/s a spout's window held it: held back
FAILURES = "heronbridge.health.failure.ratio"  # timeouts and fails per ack: tuples lost
BLACKLIST = "heronbridge.health.blacklist.secs"  # how long an action that did not help waits

# Heron's policies run every 60s over 300s of metrics and wait 180s after acting; these
# act about a minute after a problem shows (the window), never in a topology's first
# minute, and check an action a window after its cool-down.
DEFAULTS: dict[str, Any] = {ENABLED: "on", INTERVAL: 10.0, WINDOW: 60.0, COOLDOWN: 120.0,
                            MAX_PARALLELISM: 8, NOISE: 20.0, RATE_SKEW: 1.5,
                            QUEUE_SKEW: 4.0, QUEUE_GROWTH: 1 << 20,
                            CRASHES: 2, CAPACITY: 0.85, HELD: 500.0, FAILURES: 0.05,
                            BLACKLIST: 1800.0}


@dataclass(frozen=True)
class HealthConfig:
    enabled: bool
    interval: float
    window: float
    cooldown: float
    max_parallelism: int
    noise_ms: float
    rate_skew: float
    queue_skew: float
    queue_growth: float
    crashes: int
    capacity: float
    held_ms: float
    failure_ratio: float
    blacklist: float

    @classmethod
    def read(cls, conf: dict, topology: str) -> HealthConfig:
        def get(key: str, minimum: float) -> float:
            value = conf.get(key, DEFAULTS[key])
            if isinstance(value, bool) or not isinstance(value, (int, float)) \
                    or value < minimum:
                msg = (f"{where(topology)}: config {key!r} expects a number >= {minimum}, "
                       f"received {value!r}")
                raise ConfigError(msg)
            return value

        enabled = conf.get(ENABLED, DEFAULTS[ENABLED])
        if enabled not in ("on", "off", True, False):
            msg = f"{where(topology)}: config {ENABLED!r} expects 'on' or 'off', " \
                  f"received {enabled!r}"
            raise ConfigError(msg)
        return cls(enabled=enabled in ("on", True), interval=get(INTERVAL, 0.1),
                   window=get(WINDOW, 0.5), cooldown=get(COOLDOWN, 0),
                   max_parallelism=int(get(MAX_PARALLELISM, 1)), noise_ms=get(NOISE, 0),
                   rate_skew=get(RATE_SKEW, 1.0), queue_skew=get(QUEUE_SKEW, 1.0),
                   queue_growth=get(QUEUE_GROWTH, 0),
                   crashes=int(get(CRASHES, 1)), capacity=get(CAPACITY, 0.01),
                   held_ms=get(HELD, 1), failure_ratio=get(FAILURES, 0),
                   blacklist=get(BLACKLIST, 0))
