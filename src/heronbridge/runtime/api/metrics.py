"""A component's own metrics: `context.metrics.count(name, by)` adds to a counter,
`context.metrics.gauge(name, value)` sets a value, `context.metrics.poll(name, source,
seconds)` reads a metric object every `seconds` (heronpy's IMetric). They travel with
the task's own metrics, named `user/NAME`, to the metrics manager, the master and every
front door (the page, /metrics, Storm UI's and the tracker's APIs)."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any

from ..errors import ComponentError

PREFIX = "user/"
MAX_NAMES = 100  # per task: metric names are labels downstream, and must stay bounded
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.:/-]{0,99}$")


@dataclass
class _Polled:
    source: Any  # get_value_and_reset() -> number, or dict of numbers
    seconds: float
    counter: bool  # its values are counts per bucket: summed into a counter
    due: float


def own_gauges(metrics: dict) -> dict[str, float]:
    """What a component's `own_metrics()` returns (heronbridge's call, once per metrics
    interval), as task gauges `user/NAME`, or `user/NAME/KEY` for each number of a map
    (what is not a number is left out)."""
    out: dict[str, float] = {}
    for name, value in metrics.items():
        if isinstance(value, dict):
            for key, item in value.items():
                if isinstance(item, (int, float)) and not isinstance(item, bool):
                    out[f"{PREFIX}{name}/{key}"] = float(item)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            out[f"{PREFIX}{name}"] = float(value)
    return out


class Metrics:
    """One task's user metrics; not thread-safe (called from the task's loop)."""

    __slots__ = ("counters", "gauges", "_polled", "where")

    def __init__(self, where: str = "") -> None:
        self.where = where
        self.counters: dict[str, float] = {}
        self.gauges: dict[str, float] = {}
        self._polled: dict[str, _Polled] = {}

    def count(self, name: str, by: float = 1.0) -> None:
        key = PREFIX + name
        if key not in self.counters:
            self._check(name, by)
            self.counters[key] = 0.0
        self.counters[key] += by

    def gauge(self, name: str, value: float) -> None:
        key = PREFIX + name
        if key not in self.gauges:
            self._check(name, value)
        self.gauges[key] = float(value)

    def poll(self, name: str, source: Any, seconds: float, counter: bool = False) -> None:
        """Read `source.get_value_and_reset()` every `seconds`: a count per bucket when
        `counter` (summed), else a value (the latest); a dict gives `name/KEY` each."""
        if not hasattr(source, "get_value_and_reset") or not seconds > 0:
            msg = (f"{self.where}: metric {name!r}: expected an object with "
                   f"get_value_and_reset() and seconds > 0, received {source!r} and {seconds!r}")
            raise ComponentError(msg)
        self._check(name, 0.0)
        self._polled[name] = _Polled(source, float(seconds), counter,
                                     time.monotonic() + seconds)

    def export(self, counters: dict[str, float], gauges: dict[str, float]) -> None:
        """Add these metrics to a task's report (polled sources first, when due)."""
        if self._polled:
            now = time.monotonic()
            for name, p in self._polled.items():
                if now >= p.due:
                    p.due = now + p.seconds
                    self._sample(name, p)
        counters.update(self.counters)
        gauges.update(self.gauges)

    def _sample(self, name: str, p: _Polled) -> None:
        value = p.source.get_value_and_reset()
        values: dict[str, Any] = value if isinstance(value, dict) else {"": value}
        for key, v in values.items():
            if not isinstance(v, (int, float)) or isinstance(v, bool):
                continue  # None (nothing in this bucket) or a value that is no number
            full = f"{name}/{re.sub(r'[^A-Za-z0-9_.:-]', '_', str(key))}" if key != "" \
                else name
            if p.counter:
                self.count(full, v)
            else:
                self.gauge(full, v)

    def _check(self, name: str, value: Any) -> None:
        if not isinstance(name, str) or not _NAME.match(name):
            msg = (f"{self.where}: expected a metric name of letters, digits, '_', '.', ':', "
                   f"'/' or '-' (up to 100, not starting with a digit), received {name!r}")
            raise ComponentError(msg)
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            msg = f"{self.where}: metric {name!r}: expected a number, received {value!r}"
            raise ComponentError(msg)
        if len(self.counters) + len(self.gauges) + len(self._polled) >= MAX_NAMES:
            msg = (f"{self.where}: metric {name!r} refused: a task reports at most "
                   f"{MAX_NAMES} metric names")
            raise ComponentError(msg)

