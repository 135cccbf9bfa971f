"""What the command line says when a user's code fails: the first exception of each
component as soon as the topology master has it (while the topology starts and while it
runs), with its task, the line of the user's file and the task's log; and, at the end,
the components that never stayed up."""

from __future__ import annotations

from typing import Any

from rich.markup import escape

from heronbridge.runtime import failures
from heronbridge.runtime.scheduler.launch import Launch

from .terminal import console


class CrashWatch:
    """Feed it the master's metrics reports (`see`); it prints each component's first
    exception once."""

    def __init__(self, launch: Launch) -> None:
        self.launch = launch
        self.said: set[str] = set()

    def see(self, report: Any) -> None:
        for component, failure in failures.first_by_component(self.launch.name,
                                                              report).items():
            if component in self.said:
                continue
            self.said.add(component)
            log = self.launch.task_log(failure.container, failure.component, failure.task)
            console.print(f"[red]error:[/] {escape(failure.where)} raised "
                          f"{escape(failure.exception)}{escape(failure.at(self.launch.source_of))}"
                          f"; its log: {escape(log)}", highlight=False)

    def never_up(self, report: Any) -> str | None:
        """The line that names the components that never stayed up (None: they all did)."""
        gone = failures.never_up(self.launch.name, report)
        if not gone:
            return None
        parts = []
        for f in gone:
            crashes = f.crashes or f.restarts
            parts.append(f"component {f.component!r} (task {f.task}: crashed {crashes} "
                         f"time{'s' if crashes != 1 else ''}, longest run {f.longest_up:.1f}s; "
                         f"{f.exception}{f.at(self.launch.source_of)})")
        return (f"topology {self.launch.name!r}: never stayed up (a task kept crashing and "
                f"none of its runs lasted {failures.STAYED_UP_SECS:.0f}s): " + "; ".join(parts))
