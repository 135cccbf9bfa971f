"""One task's process: register with the stream manager, host the component, loop.

The component runs in this process's main thread. Each loop turn reads what the stream
manager sent, runs the component on it, then flushes everything the component emitted
as one batch per destination: batches grow with load and shrink to single tuples when
the topology is idle, so throughput and latency both stay good without tuning.

Under effectively-once (runtime/checkpoint) the component is built only when the first
rollback names the checkpoint to start from, and built anew at every rollback: its state
comes back through `init_state`, everything the old one held or emitted is dropped.
"""

from __future__ import annotations

import itertools
import logging
import os
import pickle
import signal
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

from ..api.context import TopologyContext
from ..api.tuple import Tuple, tick_tuple, tuple_class
from ..checkpoint import Aligner, CheckpointStorage
from ..checkpoint.partitions import restored_state
from ..config import TopologyConfig
from ..errors import ComponentError, ProtocolError, SerializationError, where
from ..plan.codec import topology_from_proto
from ..plan.logical import FIELDS, resolve_import_path
from ..plan.tasks import TaskLayout
from ..procfs import rss_bytes
from ..proto import control_pb2, topology_pb2
from ..telemetry import (
    ACK_COUNT,
    BACKPRESSURE_MS,
    COMPLETE_LATENCY,
    EMIT_COUNT,
    ERROR_COUNT,
    EXECUTE_COUNT,
    EXECUTE_TIME_NS,
    FAIL_COUNT,
    NEXT_TUPLE_COUNT,
    OUT_QUEUE_BYTES,
    PENDING,
    RSS_BYTES,
    TIMEOUT_COUNT,
    Histogram,
)
from ..wire import frames
from ..wire.auth import AuthError
from ..wire.serde import make_serializer
from .connection import Connection, ConnectionLost
from .emitter import BoltEmitter, SpoutEmitter, stream_table
from .metrics import MetricsPublisher
from .pacing import EAGER_SECS, IDLE_WAIT, MAX_ACK_WAIT, SLOW_IDLE
from .window import InFlightWindow

log = logging.getLogger("heronbridge.runtime.instance")

EXIT_COMPONENT_ERROR = 1
EXIT_LOST_STREAM_MANAGER = 3
LATENCY_SAMPLES = 64  # complete latencies recorded per batch of acks, at most
EXECUTE_CHECK = 16  # a bolt's long batch looks at the clock after this many tuples


class RolledBack(Exception):  # noqa: N818 - a signal through the loops, not an error
    """The stream manager said to roll back: the loops unwind and the task restores."""

    def __init__(self, message: Any) -> None:
        super().__init__(message.checkpoint_id)
        self.message = message


class InstanceRunner:
    def __init__(self, topology_id: str, task: int, container: int, stmgr_address: Any,
                 metrics_address: str, secret: bytes, incarnation: int = 0) -> None:
        self.topology_id = topology_id
        self.secret = secret
        self.task = task
        self.container = container
        self.stmgr_address = stmgr_address
        self.metrics_address = metrics_address
        self.incarnation = incarnation
        self.stopping = False
        self.topology = "?"
        self.component = "?"
        self.conn: Connection | None = None
        self.send: Callable[[list[bytes]], None] | None = None  # frames to the stream manager
        self.backlog: tuple[bytes, list] = (b"", [])
        self.active = False  # a spout runs: its topology is RUNNING and processing
        self.running = False  # the topology's state is RUNNING
        self.processing = True  # effectively-once: not between a rollback and its end
        self.stateful = False
        self.state: dict | None = None  # a stateful component's, saved at checkpoints
        self.txid = 0
        self.component_open = False
        self.eager_until = 0.0  # see EAGER_SECS
        self.acks_until = 0.0  # see MAX_ACK_WAIT
        self.pull_host: Any = None  # set when the component owns its loop (see pull.py)
        self.emitter: SpoutEmitter | BoltEmitter | None = None
        self.bp_ms = 0.0
        self.counts = {NEXT_TUPLE_COUNT: 0, EXECUTE_COUNT: 0, EXECUTE_TIME_NS: 0,
                       ACK_COUNT: 0, FAIL_COUNT: 0, TIMEOUT_COUNT: 0, ERROR_COUNT: 0}
        self.latency = Histogram()

    # -- set-up -----------------------------------------------------------------

    def _stop(self, signum: int, frame: Any) -> None:
        self.stopping = True

    def _register(self, deadline: float) -> control_pb2.RegisterInstanceResponse:
        while True:
            try:
                self.conn = Connection.connect(self.stmgr_address, self.secret)
                self.send = self.conn.send
                break
            except (OSError, AuthError):  # not listening yet, or going away: try again
                if time.monotonic() > deadline or self.stopping:
                    raise
                time.sleep(0.05)
        request = control_pb2.RegisterInstanceRequest(
            topology_id=self.topology_id, task_id=self.task, pid=os.getpid())
        self.conn.send([frames.control_frame(request)])
        while True:
            data, found = self.conn.poll(0.2)
            for i, (kind, _dest, start, end) in enumerate(found):
                if kind == frames.CONTROL:
                    msg = frames.parse_control(memoryview(data)[start:end])
                    if isinstance(msg, control_pb2.RegisterInstanceResponse):
                        if not msg.status.ok:
                            raise ProtocolError(msg.status.message)
                        # What came in the same read (the topology's state, say) is
                        # handled once the component is set up.
                        self.backlog = (data, found[i + 1:])
                        return msg
            if time.monotonic() > deadline or self.stopping:
                msg = f"task {self.task}: no registration reply from the stream manager"
                raise ProtocolError(msg)

    def _setup(self, pplan: Any) -> None:
        plan = topology_from_proto(pplan.topology)
        my_stmgr = next(i.stmgr_id for i in pplan.instances if i.task_id == self.task)
        local = frozenset(i.task_id for i in pplan.instances if i.stmgr_id == my_stmgr)
        self.attach(plan, local)
        self.metrics = MetricsPublisher(self.metrics_address, self.topology_id, self.component,
                                        self.task, self.secret)

    def attach(self, plan: Any, local: frozenset[int], seed: int | None = None) -> None:
        """Load this task's component of `plan` and build its collector; `local` are the
        tasks behind the same stream manager (local-or-shuffle prefers them)."""
        layout = TaskLayout.of(plan)
        self.plan = plan
        self.topology = plan.name
        self.component = layout.task_component[self.task]
        spec = self.spec = plan.components[self.component]
        conf = self.user_conf = plan.component_config(self.component)
        self.conf = TopologyConfig.read(conf, plan.name, self.component)
        if self.conf.debug:
            logging.getLogger().setLevel(logging.DEBUG)
        for entry in reversed(plan.python_path):
            if entry not in sys.path:
                sys.path.insert(0, entry)
        self.context = TopologyContext.build(plan, self.topology_id, self.task)
        self.serializer = make_serializer(self.conf.serializer, self.topology)
        self.task_component = layout.task_component
        self.streams = stream_table(plan)
        self.decoders: dict[tuple[int, int], Callable[[memoryview], list]] = {}
        self.is_spout = spec.is_spout
        self.local, self.seed = local, seed
        self.stateful = self.conf.stateful
        if self.stateful:
            self._plan_checkpoints(layout)
        self.build_component()

    def build_component(self) -> None:
        """A new instance of the component, with a new collector (and window)."""
        try:
            cls = resolve_import_path(self.spec.class_path)
            self.user = cls()
        except Exception as exc:
            msg = f"{self.loc()}: cannot load {self.spec.class_path!r}: {exc!r}"
            raise ComponentError(msg) from exc
        if self.stateful and getattr(self.user, "owns_loop", False):
            msg = (f"{self.loc()}: {self.spec.class_path!r} keeps its own loop, which "
                   "EFFECTIVELY_ONCE cannot rebuild at a rollback; expected a component the "
                   "runtime's loops call")
            raise ComponentError(msg)
        kind = SpoutEmitter if self.is_spout else BoltEmitter
        self.emitter = kind(self.plan, self.task, self.serializer, self.conf.acking, self.local,
                            self.context, self.seed)
        self.window = InFlightWindow(self.conf.max_spout_pending, self.conf.acking,
                                     self.conf.latency_target_secs)
        self.user.config = self.user_conf
        self.user.context = self.context
        self.user.collector = self.emitter

    def _plan_checkpoints(self, layout: TaskLayout) -> None:
        """Where this task's markers go, and whose it waits for."""
        plan, tasks = self.plan, layout.component_tasks
        self.downstream = sorted({t for stream in self.spec.outputs
                                  for bolt, _ in plan.subscribers(self.component, stream)
                                  for t in tasks[bolt]})
        inputs = frozenset(t for inp in self.spec.inputs for t in tasks[inp.component])
        self.aligner = Aligner(inputs, self.conf.checkpoint_buffer_bytes, self.loc())
        self.storage = CheckpointStorage(self.conf.checkpoint_root, self.topology)

    def loc(self) -> str:
        return where(self.topology, self.component, self.task)

    # -- main -------------------------------------------------------------------

    def run(self) -> int:
        signal.signal(signal.SIGTERM, self._stop)
        signal.signal(signal.SIGINT, self._stop)
        try:
            response = self._register(time.monotonic() + 60)
            self._setup(response.pplan)
            log.info("%s: started (incarnation %d, pid %d)", self.loc(), self.incarnation,
                     os.getpid())
            if getattr(self.user, "owns_loop", False):
                from .pull import PullHost

                self.user.run(PullHost(self))
                self.finish()
                return 0
            if self.stateful:
                self._await_restore()
            else:
                self.start_component()
            while True:
                try:
                    if self.is_spout:
                        self._spout_loop()
                    else:
                        self._bolt_loop()
                    break
                except RolledBack as rollback:
                    self.restore(rollback.message)
            self._shutdown()
            return 0
        except SystemExit as exc:  # the component chose to exit: what it sent goes first
            log.info("%s: the component exits with %s", self.loc(), exc.code)
            self.finish()
            return exc.code if isinstance(exc.code, int) else 1
        except ConnectionLost as exc:
            log.error("%s: lost the stream manager (%s); exiting to be restarted",
                      self.loc(), exc)
            return EXIT_LOST_STREAM_MANAGER
        except Exception as exc:  # noqa: BLE001 - a component failure ends only this task
            self.counts[ERROR_COUNT] += 1
            log.error("%s: %s\n%s", self.loc(), _describe(exc), traceback.format_exc())
            if self.emitter is not None:
                self.emitter.exceptions.add(exc)
            self._salvage()
            return EXIT_COMPONENT_ERROR

    def start_component(self) -> None:
        """open (a spout) or prepare (a bolt) the component the runtime's loops call."""
        if self.is_spout:
            self.user.open(self.user.config, self.context, self.emitter)
        else:
            self.user.prepare(self.user.config, self.context, self.emitter)
        self.component_open = True

    # -- effectively-once ----------------------------------------------------------

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
            raise
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
            if self.is_spout:
                self.user.close()
            else:
                self.user.cleanup()
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

    def flush(self) -> None:
        try:
            out = self.emitter.flush()
        except SerializationError as exc:
            self.send(exc.frames)
            raise
        if out:
            self.send(out)

    def _salvage(self) -> None:
        """Send what was already emitted and acked before the task dies."""
        if self.conn is None or self.emitter is None:
            return
        try:
            self.flush()
        except SerializationError:
            pass
        try:
            self.conn.drain(2.0)
            self.publish()
        except Exception:  # noqa: BLE001, S110 - dying anyway; the log has the cause
            pass

    def _shutdown(self) -> None:
        try:
            if self.is_spout:
                self.user.close()
            else:
                self.user.cleanup()
        finally:
            self.finish()

    def finish(self) -> None:
        """Send everything still buffered and the last metrics."""
        self.flush()
        self.conn.drain(2.0)
        self.publish()
        log.info("%s: stopped", self.loc())

    def reset_backpressure(self) -> None:
        """Start counting backpressure time afresh (a loop beginning)."""
        self._blocked_since = None

    def backpressured(self, now: float) -> bool:
        """Hysteresis on unsent output: stop producing above the high watermark and
        resume below the low one."""
        out = self.conn.out_bytes
        if self._blocked_since is None:
            if out > self.conf.bp_high_bytes:
                self._blocked_since = now
        elif out <= self.conf.bp_low_bytes:
            self.bp_ms += (now - self._blocked_since) * 1000
            self._blocked_since = None
        return self._blocked_since is not None

    # -- spouts -----------------------------------------------------------------

    def _spout_loop(self) -> None:
        spout, em, conn = self.user, self.emitter, self.conn
        next_tuple = spout.next_tuple
        pending = em.pending
        window = self.window
        burst = self.conf.spout_burst
        burst_secs, burst_bytes = self.conf.emit_batch_secs, self.conf.emit_batch_bytes
        window_full = False
        self.reset_backpressure()
        interval = self.conf.metrics_interval_secs
        next_metrics = time.monotonic() + interval
        monotonic = time.monotonic
        data, found = self.backlog
        self.backlog = (b"", [])
        self.spout_frames(data, found)
        while not self.stopping:
            now = monotonic()
            max_pending = window.limit
            window_full = len(pending) >= (window.resume_below(burst) if window_full
                                           else max_pending)
            if window_full:
                window.stalled(now)
            can_emit = self.active and not window_full and not self.backpressured(now)
            wait = 0.0
            if not can_emit:
                wait = min(0.1, next_metrics - now)
            elif now < self.acks_until and pending:
                can_emit, wait = False, self.acks_until - now
            data, found = conn.poll(wait)
            if found:
                self.spout_frames(data, found)
                if em.unflushed:  # replays from fail(): out before next_tuple runs
                    self.flush()
                can_emit = can_emit and self.active and len(pending) < max_pending
            if can_emit:
                # A burst ends when next_tuple emits nothing, the window fills, or after
                # emit.batch.time or about emit.batch.size.bytes of tuples.
                start = emitted = em.emitted
                em.now = began = before = monotonic()
                most = start + max(1, int(burst_bytes / em.bytes_per_emit))
                eager_until = self.eager_until
                calls = 0
                for calls in range(1, burst + 1):  # noqa: B007 - counted after the loop
                    next_tuple()
                    after = monotonic()
                    now_emitted = em.emitted
                    if now_emitted == emitted:
                        if after - before > SLOW_IDLE:
                            self.eager_until = after + EAGER_SECS
                            self.acks_until = after + min(after - before, MAX_ACK_WAIT)
                        break
                    if now_emitted >= most or len(pending) >= max_pending \
                            or after - began > burst_secs or after < eager_until:
                        break
                    emitted, before = now_emitted, after
                self.counts[NEXT_TUPLE_COUNT] += calls
                if em.ack_now:
                    acked, em.ack_now = em.ack_now, []
                    for msg_id in acked:
                        spout.ack(msg_id)
                    self.counts[ACK_COUNT] += len(acked)
                if em.emitted == start:
                    self.flush()
                    data, found = conn.poll(IDLE_WAIT)
                    if found:
                        self.spout_frames(data, found)
            self.flush()
            if now >= next_metrics:
                self.publish()
                next_metrics = now + interval

    def spout_frames(self, data: bytes, found: list, ack: Callable | None = None,
                      fail: Callable | None = None) -> None:
        """Apply what the stream manager sent a spout: completed, failed and expired
        trees go to `ack` and `fail` (the spout's own methods by default)."""
        pop = self.emitter.pending.pop
        ack = ack or self.user.ack
        fail = fail or self.user.fail
        now = time.monotonic()
        for i, (kind, _dest, start, end) in enumerate(found):
            if kind == frames.CONTROL:
                msg = self.parse_control(data, start, end)
                if isinstance(msg, control_pb2.RestoreState):
                    self.backlog = (data, found[i + 1:])
                    raise RolledBack(msg)
                self.control(msg)
                continue
            try:
                roots = frames.ints_from(memoryview(data)[start + frames.HEADER_SIZE:end])
            except ValueError as exc:  # not a whole number of roots
                self._malformed(f"{frames.KIND_NAMES[kind]} frame", exc)
                continue
            entries = [e for e in map(pop, roots, itertools.repeat(None)) if e is not None]
            if kind == frames.ACKED:
                self.counts[ACK_COUNT] += len(entries)
                for msg_id, _ in entries:
                    ack(msg_id)
                # Complete latency from a sample of each batch: exact counts are in
                # ack-count; the histogram only needs a representative spread.
                add = self.latency.add
                sample = entries[::max(1, len(entries) // LATENCY_SAMPLES)]
                for _, emitted_at in sample:
                    add(now - emitted_at)
                if sample:
                    self.window.acked(now - sum(e for _, e in sample) / len(sample),
                                      len(self.emitter.pending), now)
            else:
                self.counts[FAIL_COUNT if kind == frames.FAILED else TIMEOUT_COUNT] += len(entries)
                if kind == frames.FAILED and entries:  # a bolt's answer: a round trip too
                    self.window.acked(now - entries[-1][1], len(self.emitter.pending), now)
                for msg_id, _ in entries:
                    fail(msg_id)

    def parse_control(self, data: bytes, start: int, end: int) -> Any:
        try:
            return frames.parse_control(memoryview(data)[start:end])
        except Exception as exc:  # noqa: BLE001 - skipped, and not the component's error
            self._malformed("control frame", exc)
            return None

    def _malformed(self, what: str, exc: BaseException) -> None:
        """A frame the stream manager sent that cannot be read: it is skipped, the
        others of its read are kept, and the log says where it came from."""
        log.error("%s: skipped a malformed %s from the stream manager (%s: %s)", self.loc(),
                  what, type(exc).__name__, exc)

    def control(self, msg: Any) -> None:
        if isinstance(msg, control_pb2.TopologyStateChange) and self.is_spout:
            self.running = msg.state == topology_pb2.RUNNING
            self._activate()
        elif isinstance(msg, control_pb2.StartCheckpoint) and self.is_spout and self.processing:
            self.checkpoint(msg.checkpoint_id)
        elif isinstance(msg, control_pb2.StartProcessing) and msg.txid == self.txid:
            self.processing = True
            self._activate()

    def _activate(self) -> None:
        """A spout runs while its topology is RUNNING, and not mid-rollback."""
        if not self.is_spout:
            return
        running = self.running and self.processing
        if self.pull_host is not None:
            self.pull_host.state_changed(running)
        elif running and not self.active:
            self.active = True
            self.eager_until = time.monotonic() + EAGER_SECS
            self.user.activate()
        elif not running and self.active:
            self.active = False
            self.user.deactivate()

    # -- bolts ------------------------------------------------------------------

    def _bolt_loop(self) -> None:
        conn = self.conn
        self._blocked_since = None
        # Read after prepare, as Heron's instance reads it after initialize: a component
        # may set its tick period there (heronpy's window bolts do).
        freq = TopologyConfig.read(self.user.config, self.topology,
                                   self.component).tick_freq_secs
        monotonic = time.monotonic
        next_tick = monotonic() + freq if freq else float("inf")
        interval = self.conf.metrics_interval_secs
        next_metrics = monotonic() + interval
        data, found = self.backlog
        self.backlog = (b"", [])
        aligner = self.aligner if self.stateful else None
        while not self.stopping:
            now = monotonic()
            if not found:
                blocked = self.backpressured(now)
                wait = max(0.0, min(0.1, next_tick - now, next_metrics - now))
                data, found = conn.poll(wait, read=not blocked)
            for i, (kind, _dest, start, end) in enumerate(found):
                if kind == frames.DATA:
                    if aligner is not None and aligner.holding and self.hold(data, start, end):
                        continue
                    self.execute_frame(data, start, end)
                    # Flush per input batch, not per read: a read can hold many batches,
                    # and holding their output back would leave the next stage idle.
                    self.flush()
                elif kind == frames.MARKER:
                    self.marker(data, start, end)
                elif kind == frames.CONTROL:
                    msg = self.parse_control(data, start, end)
                    if isinstance(msg, control_pb2.RestoreState):
                        self.backlog = (data, found[i + 1:])
                        raise RolledBack(msg)
                    self.control(msg)
            found = []
            now = monotonic()
            if now >= next_tick:
                self._run_tuples([tick_tuple(freq)])
                next_tick += freq
                if next_tick < now:
                    next_tick = now + freq
            self.flush()
            if now >= next_metrics:
                self.publish()
                next_metrics = now + interval

    def _run_tuples(self, tuples: list[Tuple]) -> None:
        t0 = time.perf_counter_ns()
        execute = self.user.execute
        for t in tuples:
            execute(t)
        self.counts[EXECUTE_TIME_NS] += time.perf_counter_ns() - t0
        self.counts[EXECUTE_COUNT] += len(tuples)

    def _decoder(self, src: int, stream: int) -> Callable[[memoryview], list]:
        """A decoder for batches from one source: straight into that source's tuples."""
        component = self.task_component.get(src)
        if component is None or stream >= len(self.streams):
            msg = (f"{self.loc()}: data frame from unknown task {src} or stream #{stream}; "
                   f"expected a task of {sorted(set(self.task_component.values()))}")
            raise ProtocolError(msg)
        _, name, fields = self.streams[stream]
        cls = tuple_class(component, name, src, fields)
        if self.serializer.typed is not None:
            decode = self.serializer.typed(cls)
        else:
            generic = self.serializer.decode

            def decode(blob: memoryview) -> list:
                return [cls(*record) for record in generic(blob)]
        self.decoders[(src, stream)] = decode
        return decode

    def _decode(self, data: bytes, start: int, end: int) -> list[Tuple]:
        """The tuples of one data frame (none if it cannot be read: see _malformed)."""
        _, _, _, src, stream = frames.DATA_HEADER.unpack_from(data, start)
        try:
            decode = self.decoders.get((src, stream)) or self._decoder(src, stream)
            return decode(memoryview(data)[start + frames.DATA_HEADER_SIZE:end])
        except Exception as exc:  # noqa: BLE001 - the sender's fault, not the component's
            self._malformed(f"data frame (from task {src}, stream #{stream})", exc)
            return []

    def decode(self, data: bytes, start: int, end: int) -> list[Tuple]:
        """The tuples of one data frame (none if it cannot be read: see _malformed)."""
        return self._decode(data, start, end)

    def execute_frame(self, data: bytes, start: int, end: int) -> None:
        batch = self._decode(data, start, end)
        execute = self.user.execute
        t0 = time.perf_counter_ns()
        if len(batch) <= EXECUTE_CHECK:
            for tup in batch:
                execute(tup)
        else:
            self._execute_long(batch, execute, t0)
        self.counts[EXECUTE_TIME_NS] += time.perf_counter_ns() - t0
        self.counts[EXECUTE_COUNT] += len(batch)

    def _execute_long(self, batch: list[Tuple], execute: Callable, t0: int) -> None:
        """A long batch sends what it produced (acks, emits) every execute.batch.time, so
        the tuples at its head are not held back until its tail is done."""
        clock = time.perf_counter_ns
        limit = int(self.conf.execute_batch_secs * 1e9)
        mark = t0
        for i in range(0, len(batch), EXECUTE_CHECK):
            for tup in batch[i:i + EXECUTE_CHECK]:
                execute(tup)
            now = clock()
            if now - mark >= limit:
                self.flush()
                mark = now

    # -- metrics ----------------------------------------------------------------

    def publish(self) -> None:
        em = self.emitter
        counters = dict(self.counts)
        counters[ERROR_COUNT] += em.errors_reported
        counters[EMIT_COUNT] = em.emitted
        counters[BACKPRESSURE_MS] = self.bp_ms
        if not self.is_spout:
            counters[ACK_COUNT] = em.acked
            counters[FAIL_COUNT] = em.failed
        gauges = {OUT_QUEUE_BYTES: self.conn.out_bytes, RSS_BYTES: rss_bytes()}
        metrics = control_pb2.TaskMetrics(
            component=self.component, task_id=self.task, container=self.container,
            timestamp_ms=int(time.time() * 1000), incarnation=self.incarnation,
            counters=counters, gauges=gauges)
        if self.is_spout:
            gauges[PENDING] = len(em.pending)
            metrics.gauges[PENDING] = len(em.pending)
            metrics.histograms[COMPLETE_LATENCY].counts.extend(self.latency.counts)
        if em.exceptions.records:
            metrics.exceptions.extend(em.exceptions.records.values())
        self.metrics.publish(metrics)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, ComponentError):
        return str(exc)
    return f"the component raised {type(exc).__name__}: {exc}"
