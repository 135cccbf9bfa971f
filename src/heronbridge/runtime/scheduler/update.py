"""`heronbridge update`: ask a running topology's master for a new parallelism (the
master applies it; see topology_master.master), and read its answer."""

from __future__ import annotations

from collections.abc import Mapping

from ..control import ask_master
from ..errors import where
from ..plan.rescale import UpdateError
from ..proto import control_pb2
from ..state import StateManager

UPDATE_TIMEOUT_SECS = 180.0


def parse_parallelism(items: list[str], topology: str | None = None) -> dict[str, int]:
    """`["count:4", "split:2"]` -> {"count": 4, "split": 2}."""
    out: dict[str, int] = {}
    for item in items:
        for part in item.split(","):
            name, sep, value = part.strip().rpartition(":")
            try:
                n = int(value)
            except ValueError:
                n = None
            if not sep or not name or n is None:
                msg = (f"{where(topology)}: expected COMPONENT:N (N an integer), received "
                       f"{part!r}")
                raise UpdateError(msg)
            out[name] = n
    return out


def update(state: StateManager, name: str, parallelism: Mapping[str, int],
           containers: int | None = None, dry_run: bool = False, reason: str = "",
           timeout: float = UPDATE_TIMEOUT_SECS) -> control_pb2.UpdateReport:
    """Apply (or with `dry_run`, only plan) a new parallelism; returns what changed and
    how long the spouts were paused. UpdateError names what the master refused."""
    request = control_pb2.ControllerRequest(update=control_pb2.UpdateRequest(
        parallelism=dict(parallelism), containers=containers or 0, dry_run=dry_run,
        reason=reason))
    reply = ask_master(state, name, request, timeout)
    if not reply.status.ok:
        raise UpdateError(reply.status.message)
    return reply.update


def restart_task(state: StateManager, name: str, task: int, reason: str) -> None:
    """End one task of a running topology; its executor starts it again."""
    reply = ask_master(state, name, control_pb2.ControllerRequest(
        restart=control_pb2.RestartTask(task_id=task, reason=reason)))
    if not reply.status.ok:
        raise UpdateError(reply.status.message)
