"""The checkpoint manager: Heron's stateful controller, in the topology master.

Checkpoints: every `topology.stateful.checkpoint.interval.secs` it names a checkpoint
(ids grow as strings) and tells every stream manager, which tells its spouts. A spout
saves its state, then sends a marker after its tuples to every downstream task; a bolt
saves once the markers of all its input tasks arrived (alignment.py) and passes markers
on. When every task reported its state stored, the checkpoint is consistent: its id is
published (`statefulcheckpoints/<topology>`, newest first, `heronbridge.checkpoint.kept`
of them), and older checkpoints, kept no more or never completed, are deleted.

Only a recorded checkpoint is acted on: the tasks hear a checkpoint is complete (their
post_save, where a two-phase commit such as the Kafka bolt's transaction commits) and a
rollback restores one only once the state manager holds its id. Else a master killed in
between would come back to the older recorded checkpoint, and the tasks would replay
what a transaction had already made visible.

Rollback: at the first start, and whenever a stream manager reports a loss (a task or a
link between stream managers went away) or registers anew, every task is restored to
the newest consistent checkpoint. Each rollback has its own id (`txid`); stream managers
forward only frames sent after it, and spouts run again once every stream manager has
reported all of its tasks restored. A checkpoint a task cannot restore from is passed
over for the next older one.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from ..errors import CheckpointError
from ..proto import control_pb2
from .storage import CheckpointStorage

log = logging.getLogger("heronbridge.runtime.checkpoint")

COMPONENT = "__checkpoints__"  # the coordinator's own metrics, beside the tasks'
SETTLE_SECS = 0.2  # losses reported together (a container's tasks, its links) roll back once
# A checkpoint in progress is given up only after this long (or the interval, if longer),
# unless a task gives it up first (its alignment passed its buffer): one that takes longer
# than a short interval under load (markers queue behind data, big state takes time to
# save) would else be replaced by the next for ever, and state that grows until a
# checkpoint completes (a transactional sink's records) would never stop growing. The
# next one starts once it completes.
ROUND_TIMEOUT_SECS = 60.0

WAITING, RESTORING, RUNNING = "waiting", "restoring", "running"


class CheckpointCoordinator:
    def __init__(self, topology: str, interval_secs: float, kept: int,
                 storage: CheckpointStorage, consistent: list[str],
                 send_all: Callable[[Any], None],
                 publish: Callable[[Any, Callable[[], None]], None]) -> None:
        """`publish(message, then)` records the consistent checkpoints in the state
        manager and calls `then()` once they are written (a newer message may replace one
        not yet written, and then only the newer one's `then` is called)."""
        self.topology = topology
        self.interval = interval_secs
        self.kept = kept
        self.storage = storage
        self.consistent = list(consistent)  # complete, newest first
        self.recorded = list(consistent)  # complete and in the state manager: acted on
        self.send_all = send_all
        self.publish = publish
        self.stmgrs: set[str] = set()
        self.tasks: set[int] = set()
        self.phase = WAITING
        self.txid = 0
        self.source = ""  # the checkpoint the current rollback restores
        self.restored: set[str] = set()
        self.passed_over: set[str] = set()
        self.round: str | None = None
        self.round_began = 0.0
        self.stored: dict[int, int] = {}  # task -> bytes, for the checkpoint in progress
        self.rollback_at: float | None = None
        self.reasons: list[str] = []
        self.next_round = 0.0
        self.paused = False  # an update is moving tasks: no new checkpoint starts
        self.counts = {"checkpoints-completed": 0, "checkpoints-given-up": 0, "rollbacks": 0,
                       "last-checkpoint-bytes": 0, "last-checkpoint-secs": 0.0,
                       "last-rollback-secs": 0.0}
        self._rollback_began = 0.0
        self._done: str | None = None  # the newest consistent checkpoint, to prune before

    # -- what the master tells it --------------------------------------------------

    def started(self) -> None:
        """Every task registered for the first time: restore them all."""
        self.rollback("the topology starts", settle=False)

    def rollback(self, reason: str, settle: bool = True) -> None:
        self.reasons.append(reason)
        when = time.monotonic() + (SETTLE_SECS if settle else 0.0)
        if self.rollback_at is None or when < self.rollback_at:
            self.rollback_at = when

    def stmgr_restored(self, msg: Any) -> None:
        if msg.txid != self.txid or self.phase != RESTORING:
            return
        if not msg.ok:
            log.error("topology %r: %s could not restore checkpoint %s: %s", self.topology,
                      msg.stmgr_id, self.source or "(none)", msg.message)
            if self.source:
                self.passed_over.add(self.source)
            self.rollback(f"restoring {self.source or 'empty state'} failed", settle=False)
            return
        self.restored.add(msg.stmgr_id)
        if self.restored >= self.stmgrs:
            self.phase = RUNNING
            took = time.monotonic() - self._rollback_began
            self.counts["last-rollback-secs"] = took
            log.info("topology %r: every task restored from %s in %.2fs (rollback %d); "
                     "processing", self.topology, self.source or "empty state", took,
                     self.counts["rollbacks"])
            self.send_all(control_pb2.StartProcessing(txid=self.txid))
            self.next_round = time.monotonic() + self.interval

    def state_stored(self, msg: Any) -> None:
        if msg.checkpoint_id != self.round or self.phase != RUNNING:
            return
        if msg.given_up:
            self.counts["checkpoints-given-up"] += 1
            log.warning("topology %r: checkpoint %s given up by task %d (its markers did "
                        "not align within heronbridge.checkpoint.buffer.bytes); the next "
                        "starts at its interval", self.topology, self.round, msg.task_id)
            self.round, self.stored = None, {}
            return
        self.stored[msg.task_id] = msg.state_bytes
        if self.tasks <= set(self.stored):
            self._consistent(msg.checkpoint_id)

    async def checkpoint_now(self, timeout: float) -> str:
        """Take a checkpoint now and wait until it is consistent (an update starts its
        new tasks from it); raises CheckpointError if none completes in time."""
        deadline = time.monotonic() + timeout
        try:
            while True:
                while self.phase != RUNNING or self.rollback_at is not None:
                    await self._until(deadline)
                checkpoint_id = self._start_round(time.monotonic())
                while self.round == checkpoint_id:  # until consistent, or a rollback
                    await self._until(deadline)
                while self.consistent[:1] == [checkpoint_id] != self.recorded[:1]:
                    await self._until(deadline)  # until the state manager holds it
                if self.recorded[:1] == [checkpoint_id]:
                    return checkpoint_id
        except TimeoutError:
            msg = (f"topology {self.topology!r}: no checkpoint completed within {timeout:.1f}s "
                   "(heronbridge.update.drain.secs); nothing was changed")
            raise CheckpointError(msg) from None

    async def restore_now(self, reason: str, checkpoint_id: str, timeout: float) -> None:
        """Roll every task back to `checkpoint_id` (the newest) and wait until done."""
        deadline = time.monotonic() + timeout
        if self.recorded[:1] != [checkpoint_id]:
            msg = f"topology {self.topology!r}: checkpoint {checkpoint_id} is not the newest"
            raise CheckpointError(msg)
        self.rollback(reason, settle=False)
        before = self.txid
        while self.txid == before or self.phase != RUNNING or self.rollback_at is not None:
            await self._until(deadline)

    @staticmethod
    async def _until(deadline: float) -> None:
        if time.monotonic() >= deadline:
            raise TimeoutError
        await asyncio.sleep(0.01)

    # -- the master's loop calls this often ------------------------------------------

    async def tick(self) -> None:
        now = time.monotonic()
        if self.rollback_at is not None and now >= self.rollback_at:
            self._start_rollback()
        elif self.phase == RUNNING and not self.paused and now >= self.next_round:
            if self.round is None:
                self._start_round(now)
            elif now - self.round_began >= max(self.interval, ROUND_TIMEOUT_SECS):
                self.counts["checkpoints-given-up"] += 1
                log.warning("topology %r: checkpoint %s incomplete after %.1fs (%d of %d "
                            "tasks stored); starting another", self.topology, self.round,
                            now - self.round_began, len(self.stored), len(self.tasks))
                self._start_round(now)
        if self.phase == RUNNING and self.round is None and self._done is not None:
            done, self._done = self._done, None
            await asyncio.to_thread(self._dispose, done)

    # -- inside ------------------------------------------------------------------

    def _start_rollback(self) -> None:
        self.rollback_at = None
        reasons, self.reasons = self.reasons, []
        self.txid = max(time.time_ns(), self.txid + 1)
        candidates = [c for c in self.recorded if c not in self.passed_over]
        self.source = candidates[0] if candidates else ""
        self.phase = RESTORING
        self.restored = set()
        self.round = None
        self.stored = {}
        self.counts["rollbacks"] += 1
        self._rollback_began = time.monotonic()
        log.log(logging.WARNING if self.counts["rollbacks"] > 1 else logging.INFO,
                "topology %r: rolling back to %s (txid %d): %s", self.topology,
                self.source or "empty state", self.txid, "; ".join(dict.fromkeys(reasons)))
        self.send_all(control_pb2.RestoreState(checkpoint_id=self.source, txid=self.txid))

    def _start_round(self, now: float) -> str:
        checkpoint_id = f"{time.time_ns():020d}"
        if self.consistent and checkpoint_id <= self.consistent[0]:  # a clock set back
            checkpoint_id = f"{int(self.consistent[0]) + 1:020d}"
        self.round, self.round_began, self.stored = checkpoint_id, now, {}
        self.next_round = now + self.interval
        self.send_all(control_pb2.StartCheckpoint(checkpoint_id=checkpoint_id))
        return checkpoint_id

    def _consistent(self, checkpoint_id: str) -> None:
        took = time.monotonic() - self.round_began
        size = sum(self.stored.values())
        self.round = None
        self.consistent = [checkpoint_id, *self.consistent][:self.kept]
        self.counts["checkpoints-completed"] += 1
        self.counts["last-checkpoint-bytes"] = size
        self.counts["last-checkpoint-secs"] = took
        log.info("topology %r: checkpoint %s consistent (%d tasks, %d bytes, %.3fs)",
                 self.topology, checkpoint_id, len(self.tasks), size, took)
        consistent = control_pb2.ConsistentCheckpoints(checkpoint_ids=self.consistent)
        self.publish(consistent, lambda: self._recorded(consistent))

    def _recorded(self, consistent: Any) -> None:
        """The state manager holds `consistent`: now the tasks may commit."""
        self.recorded = list(consistent.checkpoint_ids)
        self.send_all(consistent)  # the tasks' post_save: the second phase of a commit
        self._done = self.recorded[0]

    def _dispose(self, newest: str) -> None:
        gone = self.storage.dispose({*self.consistent, *self.recorded}, newest)
        if gone:
            log.debug("topology %r: deleted checkpoints %s", self.topology, gone)

    def metrics(self) -> control_pb2.TaskMetrics:
        return control_pb2.TaskMetrics(
            component=COMPONENT, task_id=-1, container=0,
            timestamp_ms=int(time.time() * 1000),
            counters={k: float(v) for k, v in self.counts.items()},
            gauges={"restoring": float(self.phase == RESTORING)})
