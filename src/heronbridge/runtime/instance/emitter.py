"""The collectors a task emits through: routing, batching and XOR-ack bookkeeping.

Emits append wire records to per-(stream, destination task) buffers; `flush()` turns
each buffer into one frame. Under at-least-once a tracked tuple's record carries its
root and a random edge: a spout picks the root and the first edges and tells its stream
manager the XOR of those edges (an init); a bolt XORs the edges of its anchored emits
into the input's edge and, on ack, sends that value for the root. The stream manager
sees a root's XOR reach zero exactly when its whole tree has been acked (Storm's acker
algorithm), whatever order the acks arrive in.
"""

from __future__ import annotations

import itertools
import logging
import os
import random
from collections.abc import Callable
from typing import Any, cast

from ..api.tuple import MULTI, Tuple
from ..errors import ComponentError, SerializationError, where
from ..grouping import NOWHERE, OutBuffer, Target, combine, make_router
from ..plan.java import is_java_grouping
from ..plan.logical import CUSTOM, DIRECT, LogicalPlan
from ..plan.tasks import TaskLayout
from ..telemetry import ExceptionLog
from ..wire import frames
from ..wire.serde import Serializer
from .java_groupings import JavaGroupings

_SEQUENCES = (list, tuple)
log = logging.getLogger("heronbridge.runtime.instance")


def stream_table(plan: LogicalPlan) -> list[tuple[str, str, tuple[str, ...]]]:
    """Every (component, stream, fields), indexed by the stream number frames carry."""
    return [(c, s, plan.components[c].outputs[s].fields)
            for c in sorted(plan.components) for s in sorted(plan.components[c].outputs)]


class _StreamOut:
    __slots__ = ("direct", "fields", "fixed", "index", "is_direct", "name", "nfields", "route")

    def __init__(self, name: str, index: int, fields: tuple[str, ...], is_direct: bool) -> None:
        self.name = name
        self.index = index
        self.fields = fields
        self.nfields = len(fields)
        self.is_direct = is_direct
        # How a regular emit finds its target: `fixed` when every tuple goes to the same
        # tasks (one subscriber task, global, all), else `route`; both None when nobody
        # subscribes (or, for a direct stream, nobody but direct subscribers).
        self.fixed: Target | None = None
        self.route: Callable[[list], Target] | None = None
        self.direct: dict[int, Target] = {}  # task -> target, for direct subscribers


class Emitter:
    """Shared by spout and bolt collectors: output streams, buffers, flush."""

    # Bolts count their emits by the records they flush, so a single-target emit does
    # no counting of its own; the emit corrects for copies to several tasks or none.
    count_at_flush = False
    # Event sampling (runtime.sampling), set while a component is sampled: its flush,
    # not its emit, looks at the tuples, so that nothing is paid per tuple otherwise.
    sampler: Any = None

    def __init__(self, plan: LogicalPlan, task: int, serializer: Serializer, acking: bool,
                 local_tasks: frozenset[int], context: Any = None, seed: int | None = None,
                 java_groupings: JavaGroupings | None = None) -> None:
        layout = TaskLayout.of(plan)
        self.task = task
        component = layout.task_component[task]
        self.where = where(plan.name, component, task)  # for errors
        self.acking = acking
        self._serializer = serializer
        self._rand = random.Random(seed).getrandbits
        self.emitted = 0
        # Bytes on the wire per emit, from the last flush that had any: what a spout's
        # burst is bounded by (heronbridge.emit.batch.size.bytes) before anything is encoded.
        self.bytes_per_emit = 64.0
        self._emitted_at_flush = 0
        self.errors_reported = 0
        self.exceptions = ExceptionLog()  # reported here, and the one a task dies of
        self._streams: dict[str, _StreamOut] = {}
        self._buffers: list[OutBuffer] = []
        index = {(c, s): i for i, (c, s, _) in enumerate(stream_table(plan))}
        spec = plan.components[component]
        rng = random.Random(seed)
        for name, stream in sorted(spec.outputs.items()):
            out = _StreamOut(name, index[(component, name)], stream.fields, stream.direct)
            routers = []
            for bolt, grouping in plan.subscribers(component, name):
                buffers = [OutBuffer(out.index, t) for t in layout.component_tasks[bolt]]
                self._buffers.extend(buffers)
                if grouping.kind == DIRECT:
                    out.direct.update({b.task: Target([b]) for b in buffers})
                    continue
                java = None
                if grouping.kind == CUSTOM and is_java_grouping(grouping.custom) and \
                        java_groupings is not None:
                    java = java_groupings.chooser(name, out.index, bolt, buffers[0].task)
                routers.append(make_router(grouping, buffers, stream.fields, local_tasks, rng,
                                           context, name, java, bolt))
            if all(isinstance(r, Target) for r in routers):
                targets = cast("list[Target]", routers)
                if targets:  # every tuple goes to the same tasks
                    out.fixed = combine(targets) if len(targets) > 1 else targets[0]
            elif len(routers) == 1:
                out.route = cast("Callable[[list], Target]", routers[0])
            else:
                calls = tuple(r if callable(r) else (lambda values, t=r: t) for r in routers)
                out.route = lambda values, calls=calls: combine([r(values) for r in calls])
            self._streams[name] = out

    # -- errors -----------------------------------------------------------------

    def report_error(self, error: BaseException) -> None:
        """Storm's reportError: the task goes on; the error is logged and counted."""
        self.errors_reported += 1
        self.exceptions.add(error)
        log.error("%s: reported error: %s: %s", self.where, type(error).__name__, error,
                  exc_info=error if error.__traceback__ is not None else None)

    def _bad_emit(self, values: Any, stream: str, direct_task: int | None) -> ComponentError:
        out = self._streams.get(stream)
        if out is None:
            msg = (f"{self.where}: emit on undeclared stream {stream!r}; "
                   f"declared streams are {sorted(self._streams)}")
        elif not isinstance(values, _SEQUENCES):
            msg = (f"{self.where}: emit on stream {stream!r} expects a list of values, "
                   f"received {type(values).__name__} {values!r}")
        elif len(values) != out.nfields:
            msg = (f"{self.where}: emit on stream {stream!r} expects {out.nfields} values "
                   f"for fields {list(out.fields)}, received {len(values)}: {values!r}")
        elif direct_task is None:
            msg = f"{self.where}: stream {stream!r} is direct; emit on it needs direct_task"
        else:
            msg = (f"{self.where}: direct emit to task {direct_task} on stream {stream!r}, "
                   "which is not a direct stream; declare it direct or drop direct_task")
        return ComponentError(msg)

    def _target(self, out: _StreamOut, values: Any, direct_task: int | None) -> Target:
        """Route an emit: by grouping, or to the task a direct emit names."""
        if direct_task is None and not out.is_direct:
            if out.fixed is not None:
                return out.fixed
            try:
                return NOWHERE if out.route is None else out.route(values)
            except (TypeError, ValueError) as exc:  # a key Storm's hashing cannot take
                msg = (f"{self.where}: emit on stream {out.name!r} cannot be routed: "
                       f"{values!r} ({exc})")
                raise ComponentError(msg) from exc
        if direct_task is None or not out.is_direct:
            raise self._bad_emit(values, out.name, direct_task)
        # Storm drops a direct emit to a task that does not subscribe.
        return out.direct.get(direct_task, NOWHERE)

    # -- flushing ---------------------------------------------------------------

    def data_frames(self, out: list[bytes]) -> SerializationError | None:
        """Append a frame per non-empty buffer to `out`; return the first encoding error.

        A buffer the serializer refuses is re-encoded record by record, so every tuple it
        accepts is still sent: nothing already accepted is lost to one bad emit.
        """
        encode = self._serializer.encode
        error = None
        size = 0
        if self.sampler is not None:
            self.sampler.take(self._buffers)
        for b in self._buffers:
            records = b.records
            if not records:
                continue
            if self.count_at_flush:
                self.emitted += len(records)
            b.records = []
            try:
                blob = encode(records)
            except Exception as exc:  # noqa: BLE001 - reported with the offending tuple
                refused = self._salvage(b, records, exc, out)
                error = error or refused
            else:
                size += len(blob)
                out.append(frames.data_frame(b.task, self.task, b.stream, blob))
        emits = self.emitted - self._emitted_at_flush
        if size and emits > 0:
            self.bytes_per_emit = size / emits
        self._emitted_at_flush = self.emitted
        return error

    def _salvage(self, buf: OutBuffer, records: list, exc: Exception,
                 out: list[bytes]) -> SerializationError:
        good, bad = [], None
        for record in records:
            try:
                self._serializer.encode([record])
            except Exception as refusal:  # noqa: BLE001
                bad = bad or (record[0], refusal)
            else:
                good.append(record)
        if good:
            out.append(frames.data_frame(buf.task, self.task, buf.stream,
                                         self._serializer.encode(good)))
        values, cause = bad or (records, exc)
        name = self._serializer.name
        expected = ("picklable values" if name == "pickle" else
                    "JSON-like values (None, bool, int, float, str, list, dict)")
        msg = (f"{self.where}: emitted values the {name} serializer cannot encode "
               f"(for task {buf.task}): {values!r} ({cause}); expected {expected}")
        return SerializationError(msg)

    def flush(self) -> list[bytes]:
        """Frames for everything emitted, acked and failed since the last flush.

        Raises SerializationError after the fact; its `frames` attribute holds every frame
        that could be built, which the caller still sends.
        """
        out: list[bytes] = []
        self._control_frames(out, before=True)
        error = self.data_frames(out)
        self._control_frames(out, before=False)
        if error is not None:
            error.frames = out
            raise error
        return out

    def _control_frames(self, out: list[bytes], before: bool) -> None:
        """Subclasses add their ack bookkeeping frames before or after the data."""

    @property
    def unflushed(self) -> bool:
        """A spout emitted since the last flush."""
        return self.emitted != self._emitted_at_flush


class SpoutEmitter(Emitter):
    """The spout's collector. Tracked emits are remembered until acked, failed or expired."""

    def __init__(self, plan: LogicalPlan, task: int, serializer: Serializer, acking: bool,
                 local_tasks: frozenset[int], context: Any = None, seed: int | None = None,
                 java_groupings: JavaGroupings | None = None) -> None:
        super().__init__(plan, task, serializer, acking, local_tasks, context, seed,
                         java_groupings)
        self._root_base = self.task << frames.ROOT_TASK_SHIFT
        # Each life of the task numbers its trees from a random point (as Storm and Heron
        # draw random root ids): acks and fails still on their way from a previous life,
        # or from before a whole container restarted, find no tree of this one. Two lives'
        # windows of live roots overlap with odds of about (their sizes) / 2^40.
        self._seq = itertools.count(int.from_bytes(os.urandom(5), "little"))
        self.pending: dict[int, tuple[Any, float]] = {}  # root -> (msg_id, emit time)
        self.ack_now: list[Any] = []  # at-most-once: msg ids acked as soon as emitted
        self.now = 0.0  # the runner's clock, read once per burst of next_tuple calls
        self._inits: list[int] = []

    def emit(self, values: list, msg_id: Any = None, stream: str = "default",
             direct_task: int | None = None) -> tuple[int, ...]:
        out = self._streams.get(stream)
        if out is None or values.__class__ not in _SEQUENCES or len(values) != out.nfields:
            raise self._bad_emit(values, stream, direct_task)
        target = out.fixed
        if target is None or direct_task is not None:
            if direct_task is None and out.route is not None:
                target = out.route(values)
            else:
                target = self._target(out, values, direct_task)
        self.emitted += 1
        if msg_id is None or not self.acking:
            record = (values,)
            for buf in target.buffers:
                buf.records.append(record)
            if msg_id is not None:
                self.ack_now.append(msg_id)
            return target.tasks
        root = self._root_base | (next(self._seq) & frames.ROOT_SEQ_MASK)
        b = target.single
        if b is not None:
            xor = self._rand(63)  # random edges; Storm does not avoid 0 either (odds 2^-63)
            b.records.append((values, root, xor))
        else:
            xor = 0
            rand = self._rand
            for b in target.buffers:
                edge = rand(63)
                xor ^= edge
                b.records.append((values, root, edge))
        self._inits += (root, xor)
        self.pending[root] = (msg_id, self.now)
        return target.tasks

    def _control_frames(self, out: list[bytes], before: bool) -> None:
        # Inits go first: the stream manager must know a root before any ack for it.
        if before and self._inits:
            out.append(frames.int_frame(frames.INIT, self.task, self._inits))
            self._inits = []


class BoltEmitter(Emitter):
    """The bolt's collector: anchored emits, acks and fails."""

    count_at_flush = True

    def __init__(self, plan: LogicalPlan, task: int, serializer: Serializer, acking: bool,
                 local_tasks: frozenset[int], context: Any = None, seed: int | None = None,
                 java_groupings: JavaGroupings | None = None) -> None:
        super().__init__(plan, task, serializer, acking, local_tasks, context, seed,
                         java_groupings)
        # Acks go out as (root, xor) pairs; consecutive acks of one root (the words of a
        # sentence, say) fold into one pair here, so the stream manager sees fewer.
        self._acks: list[int] = []
        self._ack_root = 0
        self._ack_xor = 0
        self._fails: list[int] = []
        self.acked = 0
        self.failed = 0

    def emit(self, values: list, stream: str = "default", anchors: Any = None,
             direct_task: int | None = None) -> tuple[int, ...]:
        out = self._streams.get(stream)
        if out is None:
            raise self._bad_emit(values, stream, direct_task)
        target = out.fixed
        if target is None or direct_task is not None:
            if direct_task is None and out.route is None and not out.is_direct:
                # Nobody subscribes: like Storm, count the emit and build nothing.
                self.emitted += 1
                return ()
            if values.__class__ not in _SEQUENCES or len(values) != out.nfields:
                raise self._bad_emit(values, stream, direct_task)
            if direct_task is None and out.route is not None:
                target = out.route(values)
            else:
                target = self._target(out, values, direct_task)
        elif values.__class__ not in _SEQUENCES or len(values) != out.nfields:
            raise self._bad_emit(values, stream, direct_task)
        if target.single is None:  # counted once, not once per copy (see count_at_flush)
            self.emitted += 1 - len(target.buffers)
        if self.acking and anchors is not None:
            if anchors.__class__ not in _SEQUENCES:
                root = anchors._root
                if root > 0:  # the common case: one anchor with one root
                    b = target.single
                    if b is not None:
                        edge = self._rand(63)
                        anchors._edge ^= edge
                        b.records.append((values, root, edge))
                        return target.tasks
                    rand = self._rand
                    for b in target.buffers:
                        edge = rand(63)
                        anchors._edge ^= edge
                        b.records.append((values, root, edge))
                    return target.tasks
            anchors = (anchors,) if isinstance(anchors, Tuple) else anchors
            for b in target.buffers:
                b.records.append(self._anchored(values, anchors))
            return target.tasks
        record = (values,)
        for b in target.buffers:
            b.records.append(record)
        return target.tasks

    def _anchored(self, values: list, anchors: Any) -> tuple:
        """The record of one copy of a tuple anchored to several inputs."""
        edges: dict[int, int] = {}
        for anchor in anchors:
            root = anchor._root
            if not root:
                continue
            edge = self._rand(63)
            if root > 0:
                anchor._edge ^= edge
                edges[root] = edges.get(root, 0) ^ edge
            else:
                pairs = anchor._edge
                pairs[0] ^= edge
                for j in range(1, len(pairs), 2):
                    edges[pairs[j]] = edges.get(pairs[j], 0) ^ edge
        if not edges:
            return (values,)
        if len(edges) == 1:
            ((root, edge),) = edges.items()
            return (values, root, edge)
        return (values, MULTI, [0, *(v for pair in edges.items() for v in pair)])

    def ack(self, tup: Tuple) -> None:
        self.acked += 1
        root = tup._root
        if root > 0:
            tup._root = 0  # a second ack must not cancel the first
            if root == self._ack_root:
                self._ack_xor ^= tup._edge
            else:
                if self._ack_root:
                    self._acks += (self._ack_root, self._ack_xor)
                self._ack_root = root
                self._ack_xor = tup._edge
        elif root == MULTI:
            tup._root = 0
            pairs = tup._edge
            acc = pairs[0]
            for j in range(1, len(pairs), 2):
                self._acks += (pairs[j], pairs[j + 1] ^ acc)

    def fail(self, tup: Tuple) -> None:
        self.failed += 1
        root = tup._root
        if root > 0:
            tup._root = 0
            self._fails.append(root)
        elif root == MULTI:
            tup._root = 0
            self._fails += tup._edge[1::2]

    def _control_frames(self, out: list[bytes], before: bool) -> None:
        if before:
            return
        if self._ack_root:
            self._acks += (self._ack_root, self._ack_xor)
            self._ack_root = 0
        if self._acks:
            out.append(frames.int_frame(frames.ACK, 0, self._acks))
            self._acks = []
        if self._fails:
            out.append(frames.int_frame(frames.FAIL, 0, self._fails))
            self._fails = []
