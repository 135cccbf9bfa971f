"""Effectively-once at the stream manager: checkpoints, rollbacks and the losses that
cause them.

The master's checkpoint and rollback messages go to the local tasks; every loss (a task
or a peer link gone) is reported to the master, which rolls the topology back. After a
rollback the router forwards only frames sent after it: a task's once it restored, a
peer's once the peer said where the rollback began on that link (ResumeFrom). When every
local task has restored, the master hears whether all did.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from google.protobuf.message import Message

from ..proto import control_pb2
from .router import Endpoint, Router

log = logging.getLogger("heronbridge.runtime.stream_manager")


class Rollback:
    def __init__(self, name: str, enabled: bool, router: Router,
                 tell_tasks: Callable[..., None], to_master: Callable[[Message], None],
                 to_peers: Callable[[Message], None], local_tasks: Callable[[], set[int]],
                 stopping: Callable[[], bool]) -> None:
        self.name = name
        self.enabled = enabled
        self.router = router  # its epoch is the current rollback
        self.tell_tasks = tell_tasks
        self.to_master = to_master
        self.to_peers = to_peers
        self.local_tasks = local_tasks
        self.stopping = stopping
        self.restore: control_pb2.RestoreState | None = None
        self.restored: dict[int, control_pb2.InstanceRestored] = {}  # for the current txid
        self.reported = False
        self.processing_txid = 0  # the rollback the master said to process after

    @property
    def txid(self) -> int:
        return self.router.epoch

    def lost(self, reason: str) -> None:
        """Tuples may have been lost: the topology rolls back (a master that is away
        rolls it back when this stream manager registers again)."""
        if self.enabled and not self.stopping():
            self.to_master(control_pb2.ResetTopologyState(stmgr_id=self.name, reason=reason))

    def greetings(self) -> list[Message]:
        """What a new peer link is told first: where the current rollback began on it."""
        return [control_pb2.ResumeFrom(txid=self.txid)] if self.enabled else []

    def forget(self, task: int) -> None:
        self.restored.pop(task, None)

    def from_master(self, message: Message) -> None:
        if isinstance(message, control_pb2.StartCheckpoint):
            self.start_checkpoint(message)
        elif isinstance(message, control_pb2.RestoreState):
            self.restore_state(message)
        elif isinstance(message, control_pb2.StartProcessing):
            self.start_processing(message)
        elif isinstance(message, control_pb2.ConsistentCheckpoints):
            self.checkpoint_consistent(message)

    def start_checkpoint(self, msg: control_pb2.StartCheckpoint) -> None:
        if self.processing_txid != self.txid:
            return  # mid-rollback: the master gives this checkpoint up
        self.tell_tasks(msg, spouts=True)

    def restore_state(self, msg: control_pb2.RestoreState) -> None:
        self.router.epoch, self.restore = msg.txid, msg
        self.restored, self.reported = {}, False
        self.to_peers(control_pb2.ResumeFrom(txid=msg.txid))
        self.tell_tasks(msg)
        log.info("%s: rolling back to %s (txid %d)", self.name,
                 msg.checkpoint_id or "empty state", msg.txid)

    def instance_restored(self, link: Endpoint, task: int,
                          msg: control_pb2.InstanceRestored) -> None:
        if msg.txid != self.txid:
            return
        link.epoch = msg.txid
        self.restored[task] = msg
        if self.reported or not set(self.restored) >= self.local_tasks():
            return
        failed = [m for m in self.restored.values() if not m.ok]
        self.reported = True
        self.to_master(control_pb2.StreamManagerRestored(
            stmgr_id=self.name, txid=self.txid, ok=not failed,
            message="; ".join(f"task {m.task_id}: {m.message}" for m in failed)))

    def start_processing(self, msg: control_pb2.StartProcessing) -> None:
        if msg.txid != self.txid:
            return
        self.processing_txid = msg.txid
        self.tell_tasks(msg)

    def checkpoint_consistent(self, msg: control_pb2.ConsistentCheckpoints) -> None:
        """Every task saved the newest checkpoint: the local tasks' post_save."""
        if self.processing_txid == self.txid:
            self.tell_tasks(msg)
