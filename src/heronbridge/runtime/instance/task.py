"""A task: one task's process, registered with its stream manager, hosting its component.

A Task is its identity, its component and its collector, and the link to its stream
manager they send on. When to call the component, and what to tell it, is its step's
(step.py: spout_step.py, bolt_step.py), which its host drives: the spout driver
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
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from google.protobuf.message import Message

from ..addresses import stmgr_id
from ..api.context import TopologyContext
from ..api.metrics import own_gauges
from ..api.tuple import Tuple, tuple_class
from ..config import TopologyConfig
from ..errors import ComponentError, ProtocolError, SerializationError, where
from ..plan.codec import topology_from_proto
from ..plan.java import java_groupings
from ..plan.logical import ComponentSpec, LogicalPlan, resolve_import_path
from ..plan.tasks import TaskLayout
from ..procfs import rss_bytes_with_children
from ..proto import control_pb2, plans_pb2
from ..sampling import Sampler
from ..telemetry import (
    ACK_COUNT,
    CRASH_COUNT,
    EMIT_COUNT,
    ERROR_COUNT,
    FAIL_COUNT,
    OUT_QUEUE_BYTES,
    RSS_BYTES,
    SOURCE_LAG,
    UPTIME_SECS,
    ExceptionLog,
)
from ..wire import frames
from ..wire.auth import AuthError, Identity
from ..wire.serde import Serializer, make_serializer
from .connection import Connection
from .emitter import BoltEmitter, SpoutEmitter, stream_table
from .java_groupings import JavaGroupings
from .metrics import MetricsPublisher, TaskTelemetry

log = logging.getLogger("heronbridge.runtime.instance")

EXIT_COMPONENT_ERROR = 1
EXIT_LOST_STREAM_MANAGER = 3


class RolledBack(Exception):  # noqa: N818 - a signal through the hosts, not an error
    """The stream manager said to roll back: the host unwinds and the task restores."""

    def __init__(self, message: control_pb2.RestoreState) -> None:
        super().__init__(message.checkpoint_id)
        self.message = message


class Link(Protocol):
    """Where a task's frames go: its connection to its stream manager (connection.py), or
    a harness's stand-in."""

    out_bytes: int  # written to it and not yet sent on

    def send(self, frames: list[bytes]) -> None: ...


class StepReport(Protocol):
    """A task's step (step.py), as the task's metrics ask it for its part."""

    def report(self, counters: dict[str, float], gauges: dict[str, float],
               histograms: dict[str, list[int]]) -> None: ...


@runtime_checkable
class Polled(Link, Protocol):
    """A link a host waits on for what the stream manager sends (connection.py's)."""

    def poll(self, timeout: float | None, read: bool = True) -> tuple[bytes, list]: ...


@dataclass(frozen=True)
class TaskLinks:
    """Where a task's process reaches its container, and the keys it proves itself with."""

    stmgr_address: Any  # a Unix socket's path, or (host, port)
    metrics_address: str
    secret: bytes
    checkpoint_key: bytes | None = None  # effectively-once: seals its saved state


@dataclass(frozen=True)
class Attached:
    """A task's component in its topology: the plan, its spec and config, its context,
    and how the tuples it receives are read."""

    plan: LogicalPlan
    layout: TaskLayout
    spec: ComponentSpec
    user_conf: dict  # the component's merged config, as it sees it
    conf: TopologyConfig
    context: TopologyContext
    serializer: Serializer
    streams: list[tuple[str, str, tuple[str, ...]]]  # indexed by a frame's stream number
    local: frozenset[int]  # the tasks behind the same stream manager
    seed: int | None
    decoders: dict[tuple[int, int], Callable[[memoryview], list]] = field(default_factory=dict)


class Task:
    """A task: its identity, its component and its collector, and the link they send on.
    Its policy (when to call the component, and what to tell it) is a step (step.py)."""

    def __init__(self, topology_id: str, task: int, container: int, stmgr_address: Any,
                 metrics_address: str, secret: bytes, incarnation: int = 0,
                 checkpoint_key: bytes | None = None) -> None:
        self.topology_id = topology_id
        self.task = task
        self.container = container
        self.incarnation = incarnation
        self.links = TaskLinks(stmgr_address, metrics_address, secret, checkpoint_key)
        self.stopping = False
        self.topology = "?"
        self.component = "?"
        self.link: Link | None = None  # set once registered (a harness sets its own)
        self.attached: Attached | None = None  # the component's plan and config
        self.user: Any = None  # the component
        self.emitter: SpoutEmitter | BoltEmitter | None = None  # its collector
        self.java_groupings: JavaGroupings | None = None  # the JVM of its Java groupings
        # Metrics, exceptions, log levels and sampling, from the process's first line on:
        # an import or a constructor that raises is a component's failure too.
        self.telemetry = TaskTelemetry()

    @property
    def attachment(self) -> Attached:
        if self.attached is None:
            msg = f"{self.loc()}: its component is not attached to a plan yet"
            raise ProtocolError(msg)
        return self.attached

    @property
    def conf(self) -> TopologyConfig:
        return self.attachment.conf

    @property
    def context(self) -> TopologyContext:
        return self.attachment.context

    @property
    def is_spout(self) -> bool:
        return self.attachment.spec.is_spout

    @property
    def exceptions(self) -> ExceptionLog:
        return self.telemetry.exceptions

    def stop(self, signum: int, frame: Any) -> None:
        self.stopping = True

    def stmgr_identity(self) -> Identity:
        address = self.links.stmgr_address
        if isinstance(address, tuple):
            return Identity.tcp(self.topology_id, stmgr_id(self.container), *address)
        return Identity.unix(self.topology_id, stmgr_id(self.container), address)

    def register(self, deadline: float) -> tuple[control_pb2.RegisterInstanceResponse,
                                                  tuple[bytes, list]]:
        """Connect and register; the reply, and the frames that came in the same read
        (the topology's state, say), for the step once the component is set up."""
        while True:
            try:
                conn = Connection.connect(self.stmgr_identity(), self.links.secret)
                self.link = conn
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
                        return msg, (data, found[i + 1:])
            if time.monotonic() > deadline or self.stopping:
                why = f"task {self.task}: no registration reply from the stream manager"
                raise ProtocolError(why)

    def setup(self, pplan: plans_pb2.PhysicalPlan) -> None:
        plan = topology_from_proto(pplan.topology)
        mine = next(i for i in pplan.instances if i.task_id == self.task)
        local = frozenset(i.task_id for i in pplan.instances if i.stmgr_id == mine.stmgr_id)
        # Before the component loads: what it raises while loading reaches the master.
        self.topology, self.component = plan.name, mine.component
        self.telemetry.publisher = MetricsPublisher(
            self.links.metrics_address, self.topology_id, self.component, self.task,
            self.links.secret)
        self.attach(plan, local)

    def attach(self, plan: LogicalPlan, local: frozenset[int], seed: int | None = None) -> None:
        """Load this task's component of `plan` and build its collector; `local` are the
        tasks behind the same stream manager (local-or-shuffle prefers them)."""
        layout = TaskLayout.of(plan)
        self.topology = plan.name
        self.component = layout.task_component[self.task]
        user_conf = plan.component_config(self.component)
        conf = TopologyConfig.read(user_conf, plan.name, self.component)
        if conf.debug:
            logging.getLogger().setLevel(logging.DEBUG)
        for entry in reversed(plan.python_path):
            if entry not in sys.path:
                sys.path.insert(0, entry)
        self.attached = Attached(
            plan, layout, plan.components[self.component], user_conf, conf,
            TopologyContext.build(plan, self.topology_id, self.task),
            make_serializer(conf.serializer, self.topology), stream_table(plan), local, seed)
        if self.java_groupings is not None:
            self.java_groupings.close()
            self.java_groupings = None
        if java_groupings(plan, self.component):  # one JVM for them, kept across rebuilds
            self.java_groupings = JavaGroupings(plan, self.topology_id, self.task,
                                                self.container, local, self.attached.serializer)
            self.java_groupings.start()
        self.build_component()

    def build_component(self) -> None:
        """A new instance of the component, with a new collector."""
        a = self.attachment
        try:
            cls = resolve_import_path(a.spec.class_path)
            self.user = cls()
        except Exception as exc:
            msg = f"{self.loc()}: cannot load {a.spec.class_path!r}: {exc!r}"
            raise ComponentError(msg) from exc
        if a.conf.stateful and getattr(self.user, "owns_loop", False):
            msg = (f"{self.loc()}: {a.spec.class_path!r} keeps its own loop, which "
                   "EFFECTIVELY_ONCE cannot rebuild at a rollback; expected a component the "
                   "runtime's loops call")
            raise ComponentError(msg)
        kind = SpoutEmitter if a.spec.is_spout else BoltEmitter
        self.emitter = kind(a.plan, self.task, a.serializer, a.conf.acking, a.local,
                            a.context, a.seed, self.java_groupings)
        self.emitter.exceptions = self.telemetry.exceptions
        self.emitter.sampler = self.telemetry.sampler
        self.user.config = a.user_conf
        self.user.context = a.context
        self.user.collector = self.emitter

    def loc(self) -> str:
        return where(self.topology, self.component, self.task)

    def start_component(self) -> None:
        """open (a spout) or prepare (a bolt) the component the runtime's loops call."""
        if self.is_spout:
            self.user.open(self.user.config, self.context, self.emitter)
        else:
            self.user.prepare(self.user.config, self.context, self.emitter)
        self.mark_up()

    def mark_up(self) -> None:
        """The component is set up: this incarnation's uptime counts from now (a rollback
        that sets it up again does not restart it)."""
        if self.telemetry.started_at is None:
            self.telemetry.started_at = time.monotonic()

    def announce_started(self) -> None:
        """The component is open or prepared: the stream manager may count this task
        ready (spouts start when every task is)."""
        self.send([frames.control_frame(control_pb2.InstanceStarted(task_id=self.task))])

    def send(self, out: list[bytes]) -> None:
        """Frames to the stream manager."""
        if self.link is None:
            msg = f"{self.loc()}: frames to send before the task registered"
            raise ProtocolError(msg)
        self.link.send(out)

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

    def crashed(self) -> None:
        """The component's code ended the task with an error."""
        self.telemetry.crashes += 1

    def died_of(self, exc: BaseException) -> None:
        """What the task dies of, where nothing reported it yet."""
        self.telemetry.errors += 1
        self.telemetry.exceptions.add(exc)

    def salvage(self, step: StepReport | None = None) -> None:
        """Send what was already emitted and acked before the task dies, and the
        metrics that say why it died."""
        if isinstance(self.link, Connection) and self.emitter is not None:
            try:
                self.flush()
            except SerializationError:
                pass
            try:
                self.link.drain(2.0)
            except Exception:  # noqa: BLE001, S110 - dying anyway; the log has the cause
                pass
        try:
            self.publish(step)
        except Exception:  # noqa: BLE001, S110 - dying anyway; the log has the cause
            pass

    def stop_component(self) -> None:
        """close (a spout) or clean up (a bolt) the component."""
        if self.is_spout:
            self.user.close()
        else:
            self.user.cleanup()

    def shutdown(self, step: StepReport | None = None) -> None:
        try:
            self.stop_component()
        finally:
            self.finish(step)

    def finish(self, step: StepReport | None = None) -> None:
        """Send everything still buffered and the last metrics."""
        self.flush()
        if isinstance(self.link, Connection):
            self.link.drain(2.0)
        self.publish(step)
        if self.telemetry.sampler is not None:
            self.telemetry.sampler.close()
        if self.java_groupings is not None:
            self.java_groupings.close()
        log.info("%s: stopped", self.loc())

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

    def control(self, msg: Message | None) -> None:
        """The control frames that are the task's own, whatever its step: log levels and
        sampling."""
        if isinstance(msg, control_pb2.LogLevel) and msg.component in ("", self.component):
            self.telemetry.log_levels.apply(msg)
        elif isinstance(msg, control_pb2.Sampling) and msg.component == self.component:
            self.sample(msg.percent)

    def sample(self, percent: float) -> None:
        """Start, change or stop sampling this task's emitted tuples."""
        telemetry = self.telemetry
        if telemetry.sampler is not None:
            telemetry.sampler.close()
        telemetry.sampler = None
        if percent > 0:
            streams = {i: s for i, (c, s, _) in enumerate(self.attachment.streams)
                       if c == self.component}
            telemetry.sampler = Sampler(self.component, self.task, percent, streams,
                                        self.conf.log_max_bytes)
        if self.emitter is not None:
            self.emitter.sampler = telemetry.sampler
        log.warning("%s: %s", self.loc(), f"sampling {percent:g}% of its emitted tuples to "
                    f"{telemetry.sampler.path.name}" if telemetry.sampler else "sampling off")

    def _decoder(self, src: int, stream: int) -> Callable[[memoryview], list]:
        """A decoder for batches from one source: straight into that source's tuples."""
        a = self.attachment
        component = a.layout.task_component.get(src)
        if component is None or stream >= len(a.streams):
            msg = (f"{self.loc()}: data frame from unknown task {src} or stream #{stream}; "
                   f"expected a task of {sorted(set(a.layout.task_component.values()))}")
            raise ProtocolError(msg)
        _, name, fields = a.streams[stream]
        cls = tuple_class(component, name, src, fields)
        if a.serializer.typed is not None:
            decode = a.serializer.typed(cls)
        else:
            generic = a.serializer.decode

            def decode_records(blob: bytes | memoryview) -> list:
                return [cls(*record) for record in generic(blob)]
            decode = decode_records
        a.decoders[(src, stream)] = decode
        return decode

    def decode(self, data: bytes, start: int, end: int) -> list[Tuple]:
        """The tuples of one data frame (none if it cannot be read: see malformed)."""
        _, _, _, src, stream = frames.DATA_HEADER.unpack_from(data, start)
        try:
            decode = self.attachment.decoders.get((src, stream)) or self._decoder(src, stream)
            return decode(memoryview(data)[start + frames.DATA_HEADER_SIZE:end])
        except Exception as exc:  # noqa: BLE001 - the sender's fault, not the component's
            self.malformed(f"data frame (from task {src}, stream #{stream})", exc)
            return []

    def source_lag(self) -> float | None:
        """What the spout says its source holds that it has not read yet (None: it does
        not say). A spout that raises there is reported, not stopped."""
        lag = getattr(self.user, "source_lag", None)
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

    def publish(self, step: StepReport | None = None) -> None:
        """This task's metrics to its metrics manager: its own and its step's."""
        telemetry = self.telemetry
        if telemetry.publisher is None:
            return  # not registered yet: nothing to say, nobody to say it to
        telemetry.log_levels.expire()  # as often as metrics go: a timeout is good to a second
        if telemetry.sampler is not None:
            telemetry.sampler.flush()  # the page reads them: live to a metrics interval
        em = self.emitter
        counters: dict[str, float] = {CRASH_COUNT: telemetry.crashes,
                                      ERROR_COUNT: telemetry.errors}
        gauges: dict[str, float] = {RSS_BYTES: rss_bytes_with_children()}
        histograms: dict[str, list[int]] = {}
        if step is not None:
            step.report(counters, gauges, histograms)
        if self.link is not None:
            gauges[OUT_QUEUE_BYTES] = self.link.out_bytes
        if telemetry.started_at is not None:
            gauges[UPTIME_SECS] = time.monotonic() - telemetry.started_at
        own = getattr(self.user, "own_metrics", None)
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
        if self.attached is not None:
            self.attached.context.metrics.export(counters, gauges)
        metrics = control_pb2.TaskMetrics(
            component=self.component, task_id=self.task, container=self.container,
            timestamp_ms=int(time.time() * 1000), incarnation=self.incarnation,
            counters=counters, gauges=gauges)
        for name, counts in histograms.items():
            metrics.histograms[name].counts.extend(counts)
        if isinstance(em, SpoutEmitter):
            lag = self.source_lag()
            if lag is not None:
                metrics.gauges[SOURCE_LAG] = lag
        if self.exceptions.records:
            metrics.exceptions.extend(self.exceptions.records.values())
        telemetry.publisher.publish(metrics)
