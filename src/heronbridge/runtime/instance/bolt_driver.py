"""The bolt driver: a bolt's step (bolt_step.py) on the task's connection. Each turn
waits for what the stream manager sends as long as the step says (reading only while it
allows), hands it to the step, which runs the component on it, then ends the turn.
"""

from __future__ import annotations

from ..errors import ProtocolError
from .bolt_step import BoltStep
from .task import Polled


class BoltDriver:
    def __init__(self, step: BoltStep) -> None:
        self.step = step

    def run(self) -> None:
        """Until the task stops (a rollback unwinds it: see RolledBack)."""
        step = self.step
        task = step.task
        conn = task.link
        if not isinstance(conn, Polled) or task.is_spout:
            msg = f"{task.loc()}: the bolt driver runs a registered bolt task"
            raise ProtocolError(msg)
        clock, poll = step.clock, conn.poll
        step.resume()
        while not task.stopping:
            data, found = poll(step.wait(clock()), step.reading)
            if found:
                step.received(data, found)
            step.done(clock())
