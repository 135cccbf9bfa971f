"""What a topology's tasks died of, read from the topology master's metrics report.

Every task publishes the exceptions it reported and the one it died of (with its stack
trace) to its container's metrics manager, which forwards them to the master: the
same path for every kind of component and container, on every scheduler, and the one
the UI reads. From a report this module tells the first exception of each task, the
line of the user's code it came from, the tasks that keep dying while the topology
starts, and those that never stayed up.
"""

from __future__ import annotations

import re
import sysconfig
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import where
from .telemetry import CRASH_COUNT, LONGEST_UPTIME_SECS, UPTIME_SECS

# A task restarted this often before every task has registered is not going to start.
START_RESTARTS = 3
# One that crashed and never ran this long never stayed up (the executor's own measure
# of a process that lived a while: scheduler.restarts.STABLE_AFTER_SECS).
STAYED_UP_SECS = 10.0

_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+), in (?P<func>.+)$')
_PACKAGE = str(Path(__file__).resolve().parents[1])  # heronbridge itself
_NOT_USERS = ("/site-packages/", "/dist-packages/", "<frozen ", "<string>")


def _library_roots() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    return tuple({paths[k] for k in ("stdlib", "platstdlib") if k in paths})


_LIBRARIES = _library_roots()


@dataclass(frozen=True)
class UserFrame:
    path: str
    line: int
    function: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}, in {self.function}"


def user_frame(stacktrace: str) -> UserFrame | None:
    """The innermost frame of a stack trace that is the user's own code: not heronbridge,
    not an installed package, not the standard library."""
    found = None
    for line in stacktrace.splitlines():
        match = _FRAME.match(line)
        if match is None:
            continue
        path = match["path"]
        if path.startswith(_PACKAGE) or path.startswith(_LIBRARIES) or \
                any(mark in path for mark in _NOT_USERS):
            continue
        found = UserFrame(path, int(match["line"]), match["func"].strip())
    return found


@dataclass(frozen=True)
class TaskFailure:
    """A task's first exception, and how its life went so far."""

    topology: str
    component: str
    task: int
    container: int
    class_name: str
    message: str
    frame: UserFrame | None
    first_ms: int
    restarts: int  # incarnations after the first (started, or waiting to start)
    crashes: int  # processes that ended by an exception or a failing exit
    longest_up: float  # seconds, the longest any incarnation ran after it started

    @property
    def where(self) -> str:
        return where(self.topology, self.component, self.task)

    @property
    def exception(self) -> str:
        """'Type: message' (its first line), or what is known without one."""
        if not self.class_name:
            return "no exception reported (it exited; its log may say why)"
        first = self.message.strip().splitlines()[0] if self.message.strip() else ""
        return f"{self.class_name}: {first}" if first else self.class_name

    def at(self, rename: Any = None) -> str:
        """' (at FILE:LINE, in FUNC)' when the trace reaches the user's code."""
        if self.frame is None:
            return ""
        path = rename(self.frame.path) if rename is not None else self.frame.path
        return f" (at {path}:{self.frame.line}, in {self.frame.function})"


def _failure(topology: str, task: Any) -> TaskFailure:
    first = min(task.exceptions, key=lambda e: e.first_ms) if task.exceptions else None
    return TaskFailure(
        topology, task.component, task.task_id, task.container,
        first.class_name if first else "", first.message if first else "",
        user_frame(first.stacktrace) if first else None, first.first_ms if first else 0,
        task.incarnation, int(task.counters.get(CRASH_COUNT, 0)),
        max(task.gauges.get(LONGEST_UPTIME_SECS, 0.0), task.gauges.get(UPTIME_SECS, 0.0)))


def task_failures(topology: str, report: Any) -> list[TaskFailure]:
    """Every task with an exception, its first one; oldest first."""
    found = [_failure(topology, t) for t in report.tasks if t.task_id >= 0 and t.exceptions]
    return sorted(found, key=lambda f: (f.first_ms, f.task))


def first_by_component(topology: str, report: Any) -> dict[str, TaskFailure]:
    """The first exception of each component (of whichever task raised first)."""
    out: dict[str, TaskFailure] = {}
    for failure in task_failures(topology, report):
        out.setdefault(failure.component, failure)
    return out


def restarts(report: Any) -> dict[tuple[str, int], int]:
    """{(component, task): restarts} of the tasks that were restarted."""
    return {(t.component, t.task_id): t.incarnation for t in report.tasks
            if t.task_id >= 0 and t.incarnation}


def never_up(topology: str, report: Any) -> list[TaskFailure]:
    """Every task that crashed (or was restarted) more than once, or once and is not up
    again, and never ran STAYED_UP_SECS, the one that failed first first. One crash
    followed by a run that goes on is no crash loop (its exception was told as it came),
    however short the run after it."""
    out: list[TaskFailure] = []
    for failure, up in sorted(_lives(topology, report), key=lambda f: (
            not f[0].class_name, f[0].first_ms, f[0].task)):
        times = failure.crashes or failure.restarts
        if times and failure.longest_up < STAYED_UP_SECS and (times > 1 or not up):
            out.append(failure)
    return out


def restarting(report: Any) -> bool:
    """Whether a task crashed (or was restarted) once and no sample of its next
    incarnation has come yet: whether never_up names it is not known from this report
    (a restart that is up sends one within a metrics interval or two)."""
    return any((f.crashes or f.restarts) == 1 and not up and f.longest_up < STAYED_UP_SECS
               for f, up in _lives("", report))


def _lives(topology: str, report: Any) -> list[tuple[TaskFailure, bool]]:
    """Each task's failures, and whether it is up again (never_up's and restarting's
    reading of one report)."""
    return [(_failure(topology, t), _up_again(t)) for t in report.tasks if t.task_id >= 0]


def _up_again(task: Any) -> bool:
    """Whether the task's latest sample is of an incarnation after its last crash whose
    component started (the last sample of one that crashed is its own, sent as it died)."""
    return UPTIME_SECS in task.gauges and \
        task.incarnation >= int(task.counters.get(CRASH_COUNT, 0))


def start_failure(topology: str, report: Any, deaths: int = START_RESTARTS
                  ) -> TaskFailure | None:
    """A task that died (was restarted, or crashed) `deaths` times before its component
    ever started, with the exception it died of (if it said)."""
    for task in report.tasks:
        if task.task_id >= 0 and max(task.incarnation,
                                     int(task.counters.get(CRASH_COUNT, 0))) >= deaths:
            failure = _failure(topology, task)
            if failure.longest_up == 0:
                return failure
    return None


def started(report: Any) -> set[tuple[str, int]]:
    """Tasks whose component was opened or prepared (as their last sample says)."""
    return {(t.component, t.task_id) for t in report.tasks
            if t.task_id >= 0 and UPTIME_SECS in t.gauges}
