"""A task under effectively-once (runtime/checkpoint): the component is built only when the
first rollback names the checkpoint to start from, and built anew at every rollback: its
state comes back through `init_state`, everything the old one held or emitted is
dropped. A checkpoint saves the state, then sends a marker to every downstream task.
"""

from __future__ import annotations

import logging
import pickle
import time
from typing import Any

from ..checkpoint import Aligner, CheckpointStorage
from ..checkpoint.partitions import restored_state
from ..errors import CheckpointError
from ..plan.logical import FIELDS
from ..plan.tasks import TaskLayout
from ..proto import control_pb2, topology_pb2
from ..wire import frames

log = logging.getLogger("heronbridge.runtime.instance")


class RolledBack(Exception):  # noqa: N818 - a signal through the loops, not an error
    """The stream manager said to roll back: the loops unwind and the task restores."""

    def __init__(self, message: Any) -> None:
        super().__init__(message.checkpoint_id)
        self.message = message


class Checkpoints:
    """Checkpoint and rollback of a task (mixed into InstanceRunner over TaskCore)."""

    def _plan_checkpoints(self, layout: TaskLayout) -> None:
        """Where this task's markers go, and whose it waits for."""
        plan, tasks = self.plan, layout.component_tasks
        self.downstream = sorted({t for stream in self.spec.outputs
                                  for bolt, _ in plan.subscribers(self.component, stream)
                                  for t in tasks[bolt]})
        inputs = frozenset(t for inp in self.spec.inputs for t in tasks[inp.component])
        self.aligner = Aligner(inputs, self.conf.checkpoint_buffer_bytes, self.loc())
        self.storage = CheckpointStorage(self.conf.checkpoint_root, self.topology,
                                         self.checkpoint_key)

    def take_control(self, data: bytes, found: list, i: int) -> None:
        """The loops' control frame `found[i]`: a rollback unwinds the loop (the frames
        after it are kept for the restored component), anything else is `control`."""
        _, _, start, end = found[i]
        msg = self.parse_control(data, start, end)
        if isinstance(msg, control_pb2.RestoreState):
            self.backlog = (data, found[i + 1:])
            raise RolledBack(msg)
        self.control(msg)

    def _await_restore(self) -> None:
        """Before the first rollback names a checkpoint there is no component to run:
        wait for it, keeping the topology's state."""
        data, found = self.backlog
        while not self.stopping:
            for i, (kind, _dest, start, end) in enumerate(found):
                if kind != frames.CONTROL:
                    continue  # sent before the rollback: dropped
                msg = self.parse_control(data, start, end)
                if isinstance(msg, control_pb2.RestoreState):
                    self.backlog = (data, found[i + 1:])
                    self.restore(msg)
                    return
                if isinstance(msg, control_pb2.TopologyStateChange):
                    self.running = msg.state == topology_pb2.RUNNING
            data, found = self.conn.poll(0.1)
        raise SystemExit(0)

    def restore(self, msg: Any) -> None:
        """Roll back: drop everything, build the component anew, give it the state it
        had at the checkpoint, and tell the stream manager."""
        began = time.monotonic()
        self.txid = msg.txid
        self.processing = False
        self.aligner.reset()
        if self.component_open:
            self._close_component()
        ok, why = True, ""
        old = self.emitter
        try:
            self.build_component()
            self._carry_counts(old)
            self.state = self._load_state(msg.checkpoint_id)
            if hasattr(self.user, "init_state"):
                self.user.init_state(self.state)
            self.active = False
            self.start_component()
        except Exception as exc:
            ok, why = False, f"{type(exc).__name__}: {exc}"
            self.send([frames.control_frame(control_pb2.InstanceRestored(
                txid=msg.txid, task_id=self.task, ok=False, message=why))])
            if not isinstance(exc, CheckpointError):
                raise
            # The checkpoint, not the component, is at fault: the master passes it over
            # for an older one, which this task, still here, waits for.
            log.error("%s: cannot restore from checkpoint %s: %s", self.loc(),
                      msg.checkpoint_id, exc)
            self._await_restore()
            return
        self.send([frames.control_frame(control_pb2.InstanceRestored(
            txid=msg.txid, task_id=self.task, ok=ok, message=why))])
        log.info("%s: restored from %s in %.3fs", self.loc(), msg.checkpoint_id or "empty state",
                 time.monotonic() - began)

    def _carry_counts(self, old: Any) -> None:
        """Metrics count over the task's life: a rebuilt collector goes on from the old
        one's counts (what the old one had not sent is dropped, and not counted)."""
        if old is None:
            return
        new = self.emitter
        new.emitted = new._emitted_at_flush = old._emitted_at_flush  # noqa: SLF001
        new.errors_reported, new.exceptions = old.errors_reported, old.exceptions
        if not self.is_spout:
            new.acked, new.failed = old.acked, old.failed

    def _load_state(self, checkpoint_id: str) -> dict:
        tasks = TaskLayout.of(self.plan).component_tasks[self.component]
        keyed = all(inp.grouping.kind == FIELDS for inp in self.spec.inputs) \
            and bool(self.spec.inputs)
        state = restored_state(self.storage, checkpoint_id, self.component,
                               tasks.index(self.task), len(tasks), keyed) \
            if checkpoint_id else None
        return {} if state is None else state

    def _close_component(self) -> None:
        try:
            self.stop_component()
        except Exception as exc:  # noqa: BLE001 - it is replaced either way
            log.warning("%s: closing the component before the rollback raised %s: %s",
                        self.loc(), type(exc).__name__, exc)

    def checkpoint(self, checkpoint_id: str) -> None:
        """Save the state, then mark the point in every output stream: what was emitted
        before it is in the checkpoint's past."""
        began = time.monotonic()
        self.flush()
        size = 0
        if self.state is not None and hasattr(self.user, "init_state"):
            if hasattr(self.user, "pre_save"):
                self.user.pre_save(checkpoint_id)
            blob = pickle.dumps(self.state, protocol=pickle.HIGHEST_PROTOCOL)
            self.storage.save(checkpoint_id, self.component, self.task, blob)
            size = len(blob)
        out = [frames.marker_frame(t, self.task, checkpoint_id) for t in self.downstream]
        out.append(frames.control_frame(control_pb2.InstanceStateStored(
            checkpoint_id=checkpoint_id, task_id=self.task, state_bytes=size,
            save_secs=time.monotonic() - began)))
        self.send(out)

    def marker(self, data: bytes, start: int, end: int) -> None:
        src, checkpoint_id = frames.parse_marker(memoryview(data)[start:end])
        done, release = self.aligner.marker(src, checkpoint_id)
        if done is not None:
            self.checkpoint(done)
        self._run_held(release)

    def hold(self, data: bytes, start: int, end: int) -> bool:
        """While markers align: keep a frame from an input whose marker came (True)."""
        if frames.DATA_HEADER.unpack_from(data, start)[3] not in self.aligner.arrived:
            return False
        self._run_held(self.aligner.hold(bytes(data[start:end])))
        return True

    def _run_held(self, held: list[bytes]) -> None:
        for frame in held:
            self.execute_frame(frame, 0, len(frame))
            self.flush()
