"""What the command line says while a topology starts: how many of its tasks have
registered and started, from the topology master's reports; on a terminal's status line
as each report comes, and off one (a log, CI) a line every few seconds, so that a start
of dozens of tasks is never silent."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from heronbridge.runtime import failures
from heronbridge.runtime.plan.logical import LogicalPlan
from heronbridge.runtime.plan.tasks import TaskLayout

from .terminal import console

PRINT_SECS = 5.0  # off a terminal: how often a line says how far the start is


class StartProgress:
    """Feed it the master's reports while the topology starts (`see`)."""

    def __init__(self, plan: LogicalPlan, status: Any, terminal: bool,
                 clock: Callable[[], float] = time.monotonic,
                 say: Callable[[str], None] | None = None) -> None:
        self.name = plan.name
        self.tasks = {(c, t) for t, c in TaskLayout.of(plan).task_component.items()
                      if c in plan.components}
        self.status = status
        self.terminal = terminal
        self.clock = clock
        self.say = say or (lambda line: console.print(line, markup=False, highlight=False))
        self.began = clock()
        self.next_line = self.began + PRINT_SECS
        self.reported = False

    def line(self, report: Any) -> str:
        registered = {(t.component, t.task_id) for t in report.tasks} & self.tasks
        started = failures.started(report) & self.tasks
        return (f"starting {self.name}: {len(started)} of {len(self.tasks)} tasks started, "
                f"{len(registered)} registered ({self.clock() - self.began:.0f}s)")

    def see(self, report: Any) -> None:
        self.reported = True
        if self.terminal:
            self.status.update(self.line(report))
        else:
            self._say(lambda: self.line(report))

    def tick(self) -> None:
        """Off a terminal, before the master's first report: the start goes on."""
        if not self.terminal and not self.reported:
            self._say(lambda: f"starting {self.name}: waiting for its topology master "
                              f"({self.clock() - self.began:.0f}s)")

    def _say(self, line: Callable[[], str]) -> None:
        now = self.clock()
        if now >= self.next_line:
            self.next_line = now + PRINT_SECS
            self.say(line())
