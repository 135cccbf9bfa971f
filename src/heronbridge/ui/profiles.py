"""A look inside a live task (runtime.profiles), on whichever host of the topology it
runs: the stream manager of its container takes it there and answers over a link that
proved the topology's secret, which only the topology's owner can read. The page asks
with the server's token, as for the buttons that change a topology."""

from __future__ import annotations

import json
from typing import Any

from heronbridge.runtime import control
from heronbridge.runtime.profiles import KINDS, MAX_SECONDS

from . import BadRequest, NotFound, UIError
from .tracker import Topology, Tracker


def take(tracker: Tracker, t: Topology, task: int, kind: str, seconds: int = 5) -> Any:
    """stacks: text; flame: SVG bytes; memory: {task, pid, kB}."""
    if kind not in KINDS:
        msg = f"expected a profile kind among {', '.join(KINDS)}, received {kind!r}"
        raise BadRequest(msg)
    if kind == "flame" and not 1 <= seconds <= MAX_SECONDS:
        msg = f"expected a sampling time of 1 to {MAX_SECONDS} seconds, received {seconds}"
        raise BadRequest(msg)
    if not any(i.task_id == task for c in (t.nodes.packing.containers if t.nodes.packing
                                           else []) for i in c.instances):
        msg = f"topology {t.name!r} has no task {task}"
        raise NotFound(msg)
    reply = control.profile(tracker.statemgr, t.name, task, kind, seconds,
                            timeout=seconds + 30 if kind == "flame" else 30)
    if not reply.status.ok:
        raise UIError(reply.status.message)
    if kind == "memory":
        return {"task": task, "pid": reply.pid, "kB": json.loads(reply.body)}
    return reply.body
