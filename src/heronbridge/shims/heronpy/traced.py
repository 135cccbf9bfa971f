"""Driving a message hook (`heronbridge.storm.hook`) for a heronpy component.

A streamparse component talks Storm's multilang protocol, and the hook sees those
messages. A heronpy component talks to its delegate instead; when a hook is configured,
the host puts what the component does into the same messages (a handshake, input
tuples, spout commands; emits, acks, fails, errors) and carries them out with Storm's
side of the protocol (common/peer.py's StormPeer), so a tracing hook records a heronpy
component exactly as it records a streamparse one. Without a hook none of this runs.
"""

from __future__ import annotations

import os
from types import SimpleNamespace
from typing import Any

from ..common import hooks
from ..common.hooks import MessageHook
from ..common.peer import StormPeer
from . import HeronpyError


def message_hook(config: dict[str, Any], loc: str) -> MessageHook | None:
    """The hook the config names ("module:factory", called with the config), or None."""
    return hooks.message_hook(config, loc, HeronpyError)


class Tracer:
    """Messages between the runtime's side and one heronpy component, through a hook."""

    def __init__(self, hook: MessageHook, config: dict[str, Any], context: Any, collector: Any,
                 is_spout: bool) -> None:
        self.hook = hook
        host = SimpleNamespace(collector=collector, is_spout=is_spout, config=config,
                               context=context, topology=context.topology_name,
                               component=context.component_id, task=context.task_id)
        self.peer = StormPeer(host, storm_values=False)  # heronpy's values as Heron's
        self.down(self.peer.handshake(os.path.join(os.getcwd(), ".pids")))
        self.up({"pid": os.getpid()})

    def down(self, msg: Any) -> list[Any]:
        """A message for the component: what the hook lets through (what it sends back
        instead is carried out)."""
        mine, back = self.hook.down(msg)
        for reply in back:
            self.peer.receive(reply)
        return mine

    def up(self, msg: dict[str, Any]) -> None:
        """A message from the component, carried out as the hook passes it on."""
        for out in self.hook.up(msg):
            self.peer.receive(out)

    def task_ids(self) -> list[int]:
        """After an emit that asked for them: its target tasks, as the hook saw them."""
        if not self.peer.replies:
            return []
        reply = self.peer.replies.popleft()
        passed = self.down(reply)
        return list(passed[0]) if passed else list(reply)

    def emit(self, values: Any, stream: str, direct_task: int | None, need_task_ids: bool,
             **fields: Any) -> list[int] | None:
        """An emit as pystorm sends it; its target tasks when it asked for them."""
        msg = {"command": "emit", "tuple": values, "stream": stream, **fields}
        if direct_task is not None:
            msg["task"] = direct_task
        if not need_task_ids:
            msg["need_task_ids"] = False  # Storm's default is True: pystorm sends only False
        self.up(msg)
        if not need_task_ids:
            return None
        return [direct_task] if direct_task is not None else self.task_ids()

    def forget(self, tup_id: str) -> None:
        """A tuple the component never acks (a tick): Storm's side stops holding it."""
        self.peer.tuples.pop(tup_id, None)
