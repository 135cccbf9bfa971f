"""What the command line says when a user's code fails: the first exception of each
component as soon as the topology master has it (while the topology starts and while it
runs), with its task, the line of the user's file and the task's log; and, at the end,
every task that never stayed up."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from rich.markup import escape

from heronbridge.runtime import failures
from heronbridge.runtime.scheduler.launch import Launch

from .terminal import console

if TYPE_CHECKING:
    from heronbridge.compat.streamparse import ProjectFiles

MISSING_MODULE = re.compile(r"No module named '([\w.]+)'")


class CrashWatch:
    """Feed it the master's metrics reports (`see`); it prints each component's first
    exception once, with the next step when there is an obvious one. `files`: a
    streamparse project's, whose virtualenvs/NAME.txt is where a missing package goes."""

    def __init__(self, launch: Launch, files: ProjectFiles | None = None) -> None:
        self.launch = launch
        self.files = files
        self.said: set[str] = set()
        self.last: Any = None  # the latest report seen

    def see(self, report: Any) -> None:
        self.last = report
        for component, failure in failures.first_by_component(self.launch.name,
                                                              report).items():
            if component in self.said:
                continue
            self.said.add(component)
            log = self.launch.task_log(failure.container, failure.component, failure.task)
            console.print(f"[red]error:[/] {escape(failure.where)} raised "
                          f"{escape(failure.exception)}{escape(failure.at(self.launch.source_of))}"
                          f"; its log: {escape(log)}{escape(self.next_step(failure))}",
                          highlight=False)

    def next_step(self, failure: failures.TaskFailure) -> str:
        """What to do about a package the topology's tasks cannot import ('' otherwise)."""
        found = MISSING_MODULE.search(failure.message) \
            if failure.class_name in ("ModuleNotFoundError", "ImportError") else None
        if found is None or self.files is None:
            return ""
        from heronbridge.compat.streamparse import missing_package

        return missing_package(self.files, found.group(1))

    def never_up(self, report: Any) -> str | None:
        """The line that names every task that never stayed up, by component (None: they
        all did, or no report was seen)."""
        gone = failures.never_up(self.launch.name, report) if report is not None else []
        if not gone:
            return None
        by_component: dict[str, list[failures.TaskFailure]] = {}
        for f in gone:
            by_component.setdefault(f.component, []).append(f)
        parts = []
        for component, tasks in by_component.items():
            lives = []
            for f in tasks:
                crashes = f.crashes or f.restarts
                lives.append(f"task {f.task}: crashed {crashes} time"
                             f"{'s' if crashes != 1 else ''}, longest run {f.longest_up:.1f}s; "
                             f"{f.exception}{f.at(self.launch.source_of)}")
            parts.append(f"component {component!r} ({'; '.join(lives)})")
        return (f"topology {self.launch.name!r}: never stayed up (a task kept crashing and "
                f"none of its runs lasted {failures.STAYED_UP_SECS:.0f}s): " + "; ".join(parts))
