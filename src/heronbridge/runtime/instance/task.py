"""A task: one task's process, registered with its stream manager, hosting its component,
with what its drivers use (connection, emitter, decode, control, publish, backpressure).

The component runs in this process's main thread. A driver runs it: the spout driver
(spout_driver.py), the bolt driver (bolt_driver.py), or the pulled host (pull.py) for a
component that owns its loop; under effectively-once a Checkpointer (checkpointer.py)
saves and restores it. runner.py puts them together, as Heron's Python instance drives
its spout and bolt instances over one base.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Callable
from typing import Any, Protocol

from google.protobuf.message import Message

from ..addresses import stmgr_id
from ..api.context import TopologyContext
from ..api.metrics import own_gauges
from ..api.tuple import Tuple, tuple_class
from ..config import TopologyConfig
from ..errors import ComponentError, ProtocolError, SerializationError, where
from ..log_levels import LogLevels
from ..plan.codec import topology_from_proto
from ..plan.java import java_groupings
from ..plan.logical import LogicalPlan, resolve_import_path
from ..plan.tasks import TaskLayout
from ..procfs import rss_bytes_with_children
from ..proto import control_pb2, plans_pb2, topology_pb2
from ..sampling import Sampler
from ..telemetry import (
    ACK_COUNT,
    BACKPRESSURE_MS,
    COMPLETE_LATENCY,
    CRASH_COUNT,
    EMIT_COUNT,
    ERROR_COUNT,
    EXECUTE_COUNT,
    EXECUTE_TIME_NS,
    FAIL_COUNT,
    NEXT_TUPLE_COUNT,
    OUT_QUEUE_BYTES,
    PENDING,
    RSS_BYTES,
    SOURCE_LAG,
    TIMEOUT_COUNT,
    UPTIME_SECS,
    WINDOW_HELD_MS,
    WINDOW_LIMIT,
    ExceptionLog,
    Histogram,
)
from ..wire import frames
from ..wire.auth import AuthError, Identity
from ..wire.serde import make_serializer
from .connection import Connection
from .emitter import BoltEmitter, SpoutEmitter, stream_table
from .java_groupings import JavaGroupings
from .metrics import MetricsPublisher
from .pacing import SpoutPacer
from .window import InFlightWindow

log = logging.getLogger("heronbridge.runtime.instance")

EXIT_COMPONENT_ERROR = 1
EXIT_LOST_STREAM_MANAGER = 3


class RolledBack(Exception):  # noqa: N818 - a signal through the drivers, not an error
    """The stream manager said to roll back: the driver unwinds and the task restores."""

    def __init__(self, message: control_pb2.RestoreState) -> None:
        super().__init__(message.checkpoint_id)
        self.message = message


class Checkpoints(Protocol):
    """What a task asks of its checkpointer (checkpointer.py) under effectively-once."""

    def checkpoint(self, checkpoint_id: str) -> None: ...

    def checkpoint_consistent(self, checkpoint_id: str) -> None: ...


class Task:
    """What every task has: its link, its component, its collector, its metrics."""

    def __init__(self, topology_id: str, task: int, container: int, stmgr_address: Any,
                 metrics_address: str, secret: bytes, incarnation: int = 0,
                 checkpoint_key: bytes | None = None) -> None:
        self.topology_id = topology_id
        self.secret = secret
        self.checkpoint_key = checkpoint_key
        self.task = task
        self.container = container
        self.stmgr_address = stmgr_address
        self.metrics_address = metrics_address
        self.incarnation = incarnation
        self.stopping = False
        self.topology = "?"
        self.component = "?"
        self.conn: Connection | None = None
        self.send: Callable[[list[bytes]], None] = self._unconnected  # to the stream manager
        self.backlog: tuple[bytes, list] = (b"", [])
        self.active = False  # a spout runs: its topology is RUNNING and processing
        self.running = False  # the topology's state is RUNNING
        self.processing = True  # effectively-once: not between a rollback and its end
        self.stateful = False
        self.is_spout = False
        self.state: dict | None = None  # a stateful component's, saved at checkpoints
        self.txid = 0
        self.component_open = False
        self.pacer: SpoutPacer | None = None  # a spout's
        self.checkpointer: Checkpoints | None = None  # effectively-once
        # Set by the pulled host (pull.py): it tells its component of (de)activation.
        self.on_activation: Callable[[bool], None] | None = None
        self.emitter: SpoutEmitter | BoltEmitter | None = None
        self.java_groupings: JavaGroupings | None = None  # the JVM of its Java groupings
        self.metrics: MetricsPublisher | None = None
        # What the component reported and what the task dies of, from its first line on:
        # an import or a constructor that raises is a component's failure too.
        self.exceptions = ExceptionLog()
        self.started_at: float | None = None  # when the component was opened or prepared
        self.bp_ms = 0.0
        self.held_ms = 0.0  # a spout's, with its in-flight window full
        self._blocked_since: float | None = None
        self.counts = {NEXT_TUPLE_COUNT: 0, EXECUTE_COUNT: 0, EXECUTE_TIME_NS: 0,
                       ACK_COUNT: 0, FAIL_COUNT: 0, TIMEOUT_COUNT: 0, ERROR_COUNT: 0,
                       CRASH_COUNT: 0}
        self.latency = Histogram()
        self.log_levels = LogLevels()  # set at run time, until their timeout
        self.sampler: Sampler | None = None  # event sampling, while it is on

    def stop(self, signum: int, frame: Any) -> None:
        self.stopping = True

    def _unconnected(self, frames: list[bytes]) -> None:
        msg = f"{self.loc()}: frames to send before the task registered"
        raise ProtocolError(msg)

    def stmgr_identity(self) -> Identity:
        address = self.stmgr_address
        if isinstance(address, tuple):
            return Identity.tcp(self.topology_id, stmgr_id(self.container), *address)
        return Identity.unix(self.topology_id, stmgr_id(self.container), address)

    def register(self, deadline: float) -> control_pb2.RegisterInstanceResponse:
        while True:
            try:
                conn = self.conn = Connection.connect(self.stmgr_identity(), self.secret)
                self.send = conn.send
                break
            except (OSError, AuthError):  # not listening yet, or going away: try again
                if time.monotonic() > deadline or self.stopping:
                    raise
                time.sleep(0.05)
        request = control_pb2.RegisterInstanceRequest(
            topology_id=self.topology_id, task_id=self.task, pid=os.getpid())
        conn.send([frames.control_frame(request)])
        while True:
            data, found = conn.poll(0.2)
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
                why = f"task {self.task}: no registration reply from the stream manager"
                raise ProtocolError(why)

    def setup(self, pplan: plans_pb2.PhysicalPlan) -> None:
        plan = topology_from_proto(pplan.topology)
        mine = next(i for i in pplan.instances if i.task_id == self.task)
        local = frozenset(i.task_id for i in pplan.instances if i.stmgr_id == mine.stmgr_id)
        # Before the component loads: what it raises while loading reaches the master.
        self.topology, self.component = plan.name, mine.component
        self.metrics = MetricsPublisher(self.metrics_address, self.topology_id, self.component,
                                        self.task, self.secret)
        self.attach(plan, local)

    def attach(self, plan: LogicalPlan, local: frozenset[int], seed: int | None = None) -> None:
        """Load this task's component of `plan` and build its collector; `local` are the
        tasks behind the same stream manager (local-or-shuffle prefers them)."""
        layout = TaskLayout.of(plan)
        self.layout = layout
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
        if self.is_spout:
            self.pacer = SpoutPacer(self.conf)
        if self.java_groupings is not None:
            self.java_groupings.close()
            self.java_groupings = None
        if java_groupings(plan, self.component):  # one JVM for them, kept across rebuilds
            self.java_groupings = JavaGroupings(plan, self.topology_id, self.task,
                                                self.container, local, self.serializer)
            self.java_groupings.start()
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
                            self.context, self.seed, self.java_groupings)
        self.emitter.exceptions = self.exceptions
        self.emitter.sampler = self.sampler
        self.window = InFlightWindow(self.conf.max_spout_pending, self.conf.acking,
                                     self.conf.latency_target_secs)
        self.user.config = self.user_conf
        self.user.context = self.context
        self.user.collector = self.emitter

    def loc(self) -> str:
        return where(self.topology, self.component, self.task)

    def start_component(self) -> None:
        """open (a spout) or prepare (a bolt) the component the runtime's loops call."""
        if self.is_spout:
            self.user.open(self.user.config, self.context, self.emitter)
        else:
            self.user.prepare(self.user.config, self.context, self.emitter)
        self.component_open = True
        self.mark_up()

    def mark_up(self) -> None:
        """The component is set up: this incarnation's uptime counts from now (a rollback
        that sets it up again does not restart it)."""
        if self.started_at is None:
            self.started_at = time.monotonic()

    def announce_started(self) -> None:
        """The component is open or prepared: the stream manager may count this task
        ready (spouts start when every task is)."""
        self.send([frames.control_frame(control_pb2.InstanceStarted(task_id=self.task))])

    def flush(self) -> None:
        sys.stderr.flush()  # the log lines of the turn (see instance/__main__.py)
        em = self.emitter
        if em is None:
            return  # no component yet: nothing emitted
        try:
            out = em.flush()
        except SerializationError as exc:
            self.send(exc.frames)
            raise
        if out:
            self.send(out)

    def salvage(self) -> None:
        """Send what was already emitted and acked before the task dies, and the
        metrics that say why it died."""
        if self.conn is not None and self.emitter is not None:
            try:
                self.flush()
            except SerializationError:
                pass
            try:
                self.conn.drain(2.0)
            except Exception:  # noqa: BLE001, S110 - dying anyway; the log has the cause
                pass
        try:
            self.publish()
        except Exception:  # noqa: BLE001, S110 - dying anyway; the log has the cause
            pass

    def stop_component(self) -> None:
        """close (a spout) or clean up (a bolt) the component."""
        if self.is_spout:
            self.user.close()
        else:
            self.user.cleanup()

    def shutdown(self) -> None:
        try:
            self.stop_component()
        finally:
            self.finish()

    def finish(self) -> None:
        """Send everything still buffered and the last metrics."""
        self.flush()
        if self.conn is not None:
            self.conn.drain(2.0)
        self.publish()
        if self.sampler is not None:
            self.sampler.close()
        if self.java_groupings is not None:
            self.java_groupings.close()
        log.info("%s: stopped", self.loc())

    def reset_backpressure(self) -> None:
        """Start counting backpressure time afresh (a loop beginning)."""
        self._blocked_since = None

    def backpressured(self, now: float) -> bool:
        """Hysteresis on unsent output: stop producing above the high watermark and
        resume below the low one."""
        conn = self.conn
        out = conn.out_bytes if conn is not None else 0
        if self._blocked_since is None:
            if out > self.conf.bp_high_bytes:
                self._blocked_since = now
        elif out <= self.conf.bp_low_bytes:
            self.bp_ms += (now - self._blocked_since) * 1000
            self._blocked_since = None
        return self._blocked_since is not None

    def parse_control(self, data: bytes, start: int, end: int) -> Message | None:
        try:
            return frames.parse_control(memoryview(data)[start:end])
        except Exception as exc:  # noqa: BLE001 - skipped, and not the component's error
            self.malformed("control frame", exc)
            return None

    def malformed(self, what: str, exc: BaseException) -> None:
        """A frame the stream manager sent that cannot be read: it is skipped, the
        others of its read are kept, and the log says where it came from."""
        log.error("%s: skipped a malformed %s from the stream manager (%s: %s)", self.loc(),
                  what, type(exc).__name__, exc)

    def take_control(self, data: bytes, found: list, i: int) -> None:
        """A driver's control frame `found[i]`: a rollback unwinds the driver (the frames
        after it are kept for the restored component), anything else is `control`."""
        _, _, start, end = found[i]
        msg = self.parse_control(data, start, end)
        if isinstance(msg, control_pb2.RestoreState):
            self.backlog = (data, found[i + 1:])
            raise RolledBack(msg)
        self.control(msg)

    def control(self, msg: Message | None) -> None:
        if isinstance(msg, control_pb2.TopologyStateChange) and self.is_spout:
            self.running = msg.state == topology_pb2.RUNNING
            self._activate()
        elif isinstance(msg, control_pb2.StartCheckpoint) and self.is_spout and self.processing \
                and self.checkpointer is not None:
            self.checkpointer.checkpoint(msg.checkpoint_id)
        elif isinstance(msg, control_pb2.StartProcessing) and msg.txid == self.txid:
            self.processing = True
            self._activate()
        elif isinstance(msg, control_pb2.ConsistentCheckpoints) and self.processing \
                and self.checkpointer is not None and msg.checkpoint_ids:
            self.checkpointer.checkpoint_consistent(msg.checkpoint_ids[0])
        elif isinstance(msg, control_pb2.LogLevel) and msg.component in ("", self.component):
            self.log_levels.apply(msg)
        elif isinstance(msg, control_pb2.Sampling) and msg.component == self.component:
            self.sample(msg.percent)

    def sample(self, percent: float) -> None:
        """Start, change or stop sampling this task's emitted tuples."""
        if self.sampler is not None:
            self.sampler.close()
        self.sampler = None
        if percent > 0:
            streams = {i: s for i, (c, s, _) in enumerate(self.streams)
                       if c == self.component}
            self.sampler = Sampler(self.component, self.task, percent, streams,
                                   self.conf.log_max_bytes)
        if self.emitter is not None:
            self.emitter.sampler = self.sampler
        log.warning("%s: %s", self.loc(), f"sampling {percent:g}% of its emitted tuples to "
                    f"{self.sampler.path.name}" if self.sampler else "sampling off")

    def _activate(self) -> None:
        """A spout runs while its topology is RUNNING, and not mid-rollback."""
        if not self.is_spout:
            return
        running = self.running and self.processing
        if self.on_activation is not None:
            self.on_activation(running)
        elif running and not self.active:
            self.active = True
            if self.pacer is not None:
                self.pacer.activated(time.monotonic())
            self.user.activate()
        elif not running and self.active:
            self.active = False
            self.user.deactivate()

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

            def decode_records(blob: bytes | memoryview) -> list:
                return [cls(*record) for record in generic(blob)]
            decode = decode_records
        self.decoders[(src, stream)] = decode
        return decode

    def decode(self, data: bytes, start: int, end: int) -> list[Tuple]:
        """The tuples of one data frame (none if it cannot be read: see malformed)."""
        _, _, _, src, stream = frames.DATA_HEADER.unpack_from(data, start)
        try:
            decode = self.decoders.get((src, stream)) or self._decoder(src, stream)
            return decode(memoryview(data)[start + frames.DATA_HEADER_SIZE:end])
        except Exception as exc:  # noqa: BLE001 - the sender's fault, not the component's
            self.malformed(f"data frame (from task {src}, stream #{stream})", exc)
            return []

    def source_lag(self) -> float | None:
        """What the spout says its source holds that it has not read yet (None: it does
        not say). A spout that raises there is reported, not stopped."""
        lag = getattr(getattr(self, "user", None), "source_lag", None)
        if lag is None:
            return None
        try:
            value = lag()
        except Exception as exc:  # the component's: reported, and metrics go on
            self.exceptions.add(exc)
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        return float(value)

    def publish(self) -> None:
        if self.metrics is None:
            return  # not registered yet: nothing to say, nobody to say it to
        self.log_levels.expire()  # as often as metrics go: a timeout is good to a second
        if self.sampler is not None:
            self.sampler.flush()  # the page reads them: live to a metrics interval
        em = self.emitter
        counters: dict[str, float] = dict(self.counts)
        counters[BACKPRESSURE_MS] = self.bp_ms
        if self.is_spout:
            counters[WINDOW_HELD_MS] = self.held_ms
        gauges: dict[str, float] = {RSS_BYTES: rss_bytes_with_children()}
        if self.conn is not None:
            gauges[OUT_QUEUE_BYTES] = self.conn.out_bytes
        if self.started_at is not None:
            gauges[UPTIME_SECS] = time.monotonic() - self.started_at
        own = getattr(getattr(self, "user", None), "own_metrics", None)
        if own is not None:
            try:
                gauges.update(own_gauges(own()))
            except Exception as exc:  # noqa: BLE001 - the task's own metrics go out anyway
                self.exceptions.add(exc)
        if em is not None:
            counters[ERROR_COUNT] += em.errors_reported
            counters[EMIT_COUNT] = em.emitted
            if isinstance(em, BoltEmitter):
                counters[ACK_COUNT] = em.acked
                counters[FAIL_COUNT] = em.failed
        context = getattr(self, "context", None)
        if context is not None:
            context.metrics.export(counters, gauges)
        metrics = control_pb2.TaskMetrics(
            component=self.component, task_id=self.task, container=self.container,
            timestamp_ms=int(time.time() * 1000), incarnation=self.incarnation,
            counters=counters, gauges=gauges)
        if isinstance(em, SpoutEmitter):
            metrics.gauges[PENDING] = len(em.pending)
            if self.window.limit != float("inf"):
                metrics.gauges[WINDOW_LIMIT] = self.window.limit
            metrics.histograms[COMPLETE_LATENCY].counts.extend(self.latency.counts)
            lag = self.source_lag()
            if lag is not None:
                metrics.gauges[SOURCE_LAG] = lag
        if self.exceptions.records:
            metrics.exceptions.extend(self.exceptions.records.values())
        self.metrics.publish(metrics)
