"""The action log: every decision the health manager takes, kept in the state manager
(`actions/<topology>`, the latest entries) so that `heronbridge list` shows it from any
host, and counted in the health manager's own metrics."""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass

from ..statemgr import StateManager

KEEP = 100
SCALE_UP, RESTART, NONE = "scale-up", "restart", "none"
# The check of an action after its cool-down: it helped, or it is not taken again for a while.
VERIFIED, BLACKLISTED = "verified", "blacklisted"


@dataclass(frozen=True)
class Action:
    action: str  # scale-up, restart, none; verified or blacklisted (an earlier action)
    diagnosis: str
    component: str
    task: int | None
    why: str  # the symptoms seen
    detail: str  # what was done, or why nothing was
    time: float = 0.0

    def line(self) -> str:
        return json.dumps(asdict(self), separators=(",", ":"))

    def text(self) -> str:
        when = time.strftime("%H:%M:%S", time.localtime(self.time))
        target = self.component + (f" task {self.task}" if self.task is not None else "")
        return f"{when} {self.action} {target} ({self.diagnosis}): {self.detail}; {self.why}"


def read_actions(statemgr: StateManager, name: str) -> list[Action]:
    out = []
    for line in statemgr.get_actions(name):
        try:
            out.append(Action(**json.loads(line)))
        except (ValueError, TypeError):
            continue  # a line of another version: skip it
    return out


def append_action(statemgr: StateManager, name: str, action: Action) -> None:
    lines = [*statemgr.get_actions(name), action.line()]
    statemgr.put_actions(name, lines[-KEEP:])
