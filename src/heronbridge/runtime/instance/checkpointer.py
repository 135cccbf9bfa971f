"""A task's checkpoints under effectively-once (runtime/checkpoint), a collaborator of its
Task: the component is built only when the first rollback names the checkpoint to start
from, and built anew at every rollback: its state comes back through `init_state`,
everything the old one held or emitted is dropped. A checkpoint saves the state, then
sends a marker to every downstream task; once every task saved it, the component's
post_save publishes what it prepared for it.
"""

from __future__ import annotations

import logging
import pickle
import time
from collections.abc import Callable

from ..checkpoint import Aligner, CheckpointStorage
from ..checkpoint.partitions import restored_state
from ..errors import CheckpointError
from ..plan.logical import FIELDS
from ..proto import control_pb2
from ..wire import frames
from .connection import Connection
from .emitter import BoltEmitter, SpoutEmitter
from .step import TaskStep
from .task import Task

log = logging.getLogger("heronbridge.runtime.instance")

FrameRunner = Callable[[bytes, int, int], None]  # runs one data frame: (data, start, end)


class Checkpointer:
    def __init__(self, task: Task) -> None:
        self.task = task
        plan, tasks = task.attachment.plan, task.attachment.layout.component_tasks
        spec = task.attachment.spec
        # Where this task's markers go, and whose it waits for.
        self.downstream = sorted({t for stream in spec.outputs
                                  for bolt, _ in plan.subscribers(task.component, stream)
                                  for t in tasks[bolt]})
        inputs = frozenset(t for inp in spec.inputs for t in tasks[inp.component])
        self.aligner = Aligner(inputs, task.conf.checkpoint_buffer_bytes, task.loc())
        self.storage = CheckpointStorage(task.conf.checkpoint_root, task.topology,
                                         task.links.checkpoint_key)
        self.state: dict | None = None  # the component's, saved at checkpoints
        self.opened = False  # a component was restored and opened or prepared

    @property
    def holding(self) -> bool:
        """Markers are aligning: the inputs whose marker came wait."""
        return self.aligner.holding

    def await_restore(self, step: TaskStep) -> None:
        """Before the first rollback names a checkpoint there is no component to run:
        wait for it, keeping the topology's state."""
        task = self.task
        data, found = step.backlog()
        while not task.stopping:
            for i, (kind, _dest, start, end) in enumerate(found):
                if kind != frames.CONTROL:
                    continue  # sent before the rollback: dropped
                msg = task.parse_control(data, start, end)
                if isinstance(msg, control_pb2.RestoreState):
                    step.keep(data, found[i + 1:])
                    self.restore(msg, step)
                    return
                if isinstance(msg, control_pb2.TopologyStateChange):
                    step.control(msg)  # kept: nothing runs before the rollback ends
            if not isinstance(task.link, Connection):
                break
            data, found = task.link.poll(0.1)
        raise SystemExit(0)

    def restore(self, msg: control_pb2.RestoreState, step: TaskStep) -> None:
        """Roll back: drop everything, build the component anew, give it the state it
        had at the checkpoint, and tell the stream manager."""
        task = self.task
        began = time.monotonic()
        step.rolling_back(msg.txid)
        self.aligner.reset()
        if self.opened:
            self._close_component()
        ok, why = True, ""
        old = task.emitter
        try:
            task.build_component()
            self._carry_counts(old)
            self.state = self._load_state(msg.checkpoint_id)
            if hasattr(task.user, "init_state"):
                task.user.init_state(self.state)
            task.start_component()
            self.opened = True
        except Exception as exc:
            ok, why = False, f"{type(exc).__name__}: {exc}"
            task.send([frames.control_frame(control_pb2.InstanceRestored(
                txid=msg.txid, task_id=task.task, ok=False, message=why))])
            if not isinstance(exc, CheckpointError):
                raise
            # The checkpoint, not the component, is at fault: the master passes it over
            # for an older one, which this task, still here, waits for.
            log.error("%s: cannot restore from checkpoint %s: %s", task.loc(),
                      msg.checkpoint_id, exc)
            self.await_restore(step)
            return
        task.send([frames.control_frame(control_pb2.InstanceRestored(
            txid=msg.txid, task_id=task.task, ok=ok, message=why))])
        log.info("%s: restored from %s in %.3fs", task.loc(), msg.checkpoint_id or "empty state",
                 time.monotonic() - began)

    def _carry_counts(self, old: SpoutEmitter | BoltEmitter | None) -> None:
        """Metrics count over the task's life: a rebuilt collector goes on from the old
        one's counts (what the old one had not sent is dropped, and not counted)."""
        new = self.task.emitter
        if old is None or new is None:
            return
        new.emitted = new._emitted_at_flush = old._emitted_at_flush  # noqa: SLF001
        new.errors_reported, new.exceptions = old.errors_reported, old.exceptions
        if isinstance(new, BoltEmitter) and isinstance(old, BoltEmitter):
            new.acked, new.failed = old.acked, old.failed

    def _load_state(self, checkpoint_id: str) -> dict:
        task = self.task
        spec = task.attachment.spec
        tasks = task.attachment.layout.component_tasks[task.component]
        keyed = all(inp.grouping.kind == FIELDS for inp in spec.inputs) and bool(spec.inputs)
        state = restored_state(self.storage, checkpoint_id, task.component,
                               tasks.index(task.task), len(tasks), keyed) \
            if checkpoint_id else None
        return {} if state is None else state

    def _close_component(self) -> None:
        try:
            self.task.stop_component()
        except Exception as exc:  # noqa: BLE001 - it is replaced either way
            log.warning("%s: closing the component before the rollback raised %s: %s",
                        self.task.loc(), type(exc).__name__, exc)

    def checkpoint(self, checkpoint_id: str) -> None:
        """Save the state, then mark the point in every output stream: what was emitted
        before it is in the checkpoint's past."""
        task = self.task
        began = time.monotonic()
        task.flush()
        size = 0
        if self.state is not None and hasattr(task.user, "init_state"):
            if hasattr(task.user, "pre_save"):
                task.user.pre_save(checkpoint_id)
            blob = pickle.dumps(self.state, protocol=pickle.HIGHEST_PROTOCOL)
            self.storage.save(checkpoint_id, task.component, task.task, blob)
            size = len(blob)
        out = [frames.marker_frame(t, task.task, checkpoint_id) for t in self.downstream]
        out.append(frames.control_frame(control_pb2.InstanceStateStored(
            checkpoint_id=checkpoint_id, task_id=task.task, state_bytes=size,
            save_secs=time.monotonic() - began)))
        task.send(out)

    def checkpoint_consistent(self, checkpoint_id: str) -> None:
        """Every task saved `checkpoint_id`: the component's post_save (the second
        phase of a two-phase commit), before the loop goes on."""
        task = self.task
        if self.opened and hasattr(task.user, "post_save"):
            task.flush()
            task.user.post_save(checkpoint_id)

    def marker(self, data: bytes, start: int, end: int, execute: FrameRunner) -> None:
        """A marker from an input: once every input's has come, checkpoint; the frames
        held meanwhile go to `execute` (the bolt driver's)."""
        src, checkpoint_id = frames.parse_marker(memoryview(data)[start:end])
        done, release = self.aligner.marker(src, checkpoint_id)
        if done is not None:
            self.checkpoint(done)
        self._run_held(release, execute)

    def hold(self, data: bytes, start: int, end: int, execute: FrameRunner) -> bool:
        """While markers align: keep a frame from an input whose marker came (True)."""
        if frames.DATA_HEADER.unpack_from(data, start)[3] not in self.aligner.arrived:
            return False
        given_up, release = self.aligner.hold(bytes(data[start:end]))
        if given_up is not None:  # else the master would wait out its round's timeout
            self.task.send([frames.control_frame(control_pb2.InstanceStateStored(
                checkpoint_id=given_up, task_id=self.task.task, given_up=True))])
        self._run_held(release, execute)
        return True

    def _run_held(self, held: list[bytes], execute: FrameRunner) -> None:
        for frame in held:
            execute(frame, 0, len(frame))
            self.task.flush()
