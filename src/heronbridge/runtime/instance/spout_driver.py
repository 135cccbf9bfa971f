"""The spout driver: a spout's step (spout_step.py) on the task's connection. Each turn
waits for what the stream manager sends as long as the step says, hands it to the step,
then runs the step's burst of next_tuple calls and its end of turn.
"""

from __future__ import annotations

from ..errors import ProtocolError
from .spout_step import SpoutStep
from .task import Polled


class SpoutDriver:
    def __init__(self, step: SpoutStep) -> None:
        self.step = step

    def run(self) -> None:
        """Until the task stops (a rollback unwinds it: see RolledBack)."""
        step = self.step
        task = step.task
        conn = task.link
        if not isinstance(conn, Polled) or not task.is_spout:
            msg = f"{task.loc()}: the spout driver runs a registered spout task"
            raise ProtocolError(msg)
        clock, poll = step.clock, conn.poll
        wait, received, run_burst, done = step.wait, step.received, step.run_burst, step.done
        step.resume()
        while not task.stopping:
            now = clock()
            data, found = poll(wait(now))
            if found:
                received(data, found)
            run_burst()
            done(now)
