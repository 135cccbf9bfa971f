"""librdkafka's log lines and client-wide errors, in the component's log. A broker that is
down makes librdkafka report the same failure every few milliseconds, for as long as it
is down: a line already logged is held back for a while, and counted."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from typing import Any

REPEAT_WINDOW_SECS = 30.0
KEYS_KEPT = 256  # distinct lines remembered; the oldest forgotten first
_NUMBERS = re.compile(r"\d+")  # "after 0ms", ports, counters: the same failure all the same


class RepeatsHeldBack(logging.Filter):
    """Passes a line, then drops lines like it (the same level and text but for numbers)
    for `window` seconds; the next one to pass says how many were dropped."""

    def __init__(self, window: float = REPEAT_WINDOW_SECS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.window, self.clock = window, clock
        self.seen: dict[tuple[int, str], list] = {}  # key -> [when passed, dropped since]

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        key = (record.levelno, _NUMBERS.sub("#", text))
        now = self.clock()
        seen = self.seen.get(key)
        if seen is not None and now - seen[0] < self.window:
            seen[1] += 1
            return False
        if seen is not None and seen[1]:
            record.msg, record.args = (f"{text} (and {seen[1]} more like it in the "
                                       f"{now - seen[0]:.0f} s before)"), ()
        self.seen.pop(key, None)
        self.seen[key] = [now, 0]
        if len(self.seen) > KEYS_KEPT:
            del self.seen[next(iter(self.seen))]
        return True


def client_logger(component_logger: logging.Logger) -> logging.Logger:
    """The logger to give librdkafka: a child of the component's (its lines go to the
    component's log), holding back repeats."""
    logger = component_logger.getChild("librdkafka")
    if not any(isinstance(f, RepeatsHeldBack) for f in logger.filters):
        logger.addFilter(RepeatsHeldBack())
    return logger


def error_callback(logger: logging.Logger, where: object) -> Callable[[Any], None]:
    """librdkafka's client-wide errors (a broker down, say): it retries by itself, so only
    a fatal one is logged as an error."""
    def on_error(err: Any) -> None:
        logger.log(logging.ERROR if err.fatal() else logging.INFO, "%s: Kafka: %s", where, err)
    return on_error
