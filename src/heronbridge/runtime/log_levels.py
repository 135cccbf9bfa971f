"""A logger's level changed at run time, and put back after a timeout (Storm's
setLogConfig, for one component's tasks): the names Python's logging and Storm's log4j
know, and what a task keeps to put a level back."""

from __future__ import annotations

import logging
import time
from typing import Any

# Storm's (log4j's) names and Python's: TRACE and ALL are DEBUG here, OFF above CRITICAL.
LEVELS = {"ALL": logging.DEBUG, "TRACE": logging.DEBUG, "DEBUG": logging.DEBUG,
          "INFO": logging.INFO, "WARN": logging.WARNING, "WARNING": logging.WARNING,
          "ERROR": logging.ERROR, "FATAL": logging.CRITICAL, "CRITICAL": logging.CRITICAL,
          "OFF": logging.CRITICAL + 10}
LEVEL_NAMES = tuple(LEVELS)


def level_number(name: str) -> int | None:
    """The level a name means; 0 for none (put the level before back); None: unknown."""
    if not name:
        return 0
    return LEVELS.get(name.strip().upper())


class LogLevels:
    """The levels a task was told to set, each with the level it had before and when that
    comes back."""

    def __init__(self) -> None:
        self.before: dict[str, int] = {}  # logger name ("" for the root) -> its own level
        self.until: dict[str, float] = {}  # monotonic deadline, for those with a timeout

    def apply(self, msg: Any) -> None:
        number = level_number(msg.level)
        if number is None:
            return  # the master checked it: a newer name this version does not know
        name = msg.logger
        logger = logging.getLogger(name or None)
        if number == 0:
            self._restore(name)
            return
        self.before.setdefault(name, logger.level)
        logger.setLevel(number)
        if msg.timeout_secs > 0:
            self.until[name] = time.monotonic() + msg.timeout_secs
        else:
            self.until.pop(name, None)
        until = f" for {msg.timeout_secs}s" if msg.timeout_secs > 0 else ""
        logger.log(max(number, logging.WARNING), "log level of %r set to %s%s",
                   name or "root", msg.level.upper(), until)

    def expire(self, now: float | None = None) -> None:
        """Put back every level whose timeout has passed."""
        if not self.until:
            return
        now = time.monotonic() if now is None else now
        for name in [n for n, deadline in self.until.items() if deadline <= now]:
            self._restore(name)

    def _restore(self, name: str) -> None:
        self.until.pop(name, None)
        if name in self.before:
            logger = logging.getLogger(name or None)
            logger.setLevel(self.before.pop(name))
            logger.warning("log level of %r back to %s", name or "root",
                           logging.getLevelName(logger.getEffectiveLevel()))
