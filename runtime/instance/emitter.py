"""The collectors a task emits through: routing, batching and XOR-ack bookkeeping.

Emits append to per-(stream, destination task) buffers; `flush()` turns them into
frames. Under at-least-once every tracked tuple carries (root, edge) pairs: a spout
picks the root and the first edges and tells its stream manager the XOR of those edges
(an init); a bolt XORs the edges of its anchored emits into the input's ack value and,
on ack, sends `edge ^ ackval` per root. The stream manager sees a root's XOR reach zero
exactly when its whole tree has been acked (Storm's acker algorithm).
"""

from __future__ import annotations

import itertools
import random
import time
from collections.abc import Callable
from typing import Any

from ..api.tuple import Tuple
from ..errors import ComponentError, SerializationError, where
from ..grouping import NOWHERE, OutBuffer, Target, combine, make_router
from ..plan.logical import DIRECT, LogicalPlan
from ..plan.tasks import TaskLayout
from ..wire import frames
from ..wire.serde import Serializer

_SEQUENCES = (list, tuple)
_monotonic = time.monotonic


def stream_table(plan: LogicalPlan) -> list[tuple[str, str, tuple[str, ...]]]:
    """Every (component, stream, fields), indexed by the stream number frames carry."""
    return [(c, s, plan.components[c].outputs[s].fields)
            for c in sorted(plan.components) for s in sorted(plan.components[c].outputs)]


class _StreamOut:
    __slots__ = ("direct", "fields", "index", "is_direct", "name", "nfields", "route")

    def __init__(self, name: str, index: int, fields: tuple[str, ...], is_direct: bool) -> None:
        self.name = name
        self.index = index
        self.fields = fields
        self.nfields = len(fields)
        self.is_direct = is_direct
        self.route: Callable[[list], Target] = lambda values: NOWHERE
        self.direct: dict[int, Target] = {}  # task -> target, for direct subscribers


class Emitter:
    """Shared by spout and bolt collectors: output streams, buffers, flush."""

    def __init__(self, plan: LogicalPlan, task: int, serializer: Serializer, acking: bool,
                 local_tasks: frozenset[int], context: Any = None, seed: int | None = None) -> None:
        layout = TaskLayout.of(plan)
        self.topology = plan.name
        self.task = task
        self.component = layout.task_component[task]
        self.acking = acking
        self._encode = serializer.encode
        self._serializer = serializer.name
        self._rand = random.Random(seed).getrandbits
        self.emitted = 0
        self._streams: dict[str, _StreamOut] = {}
        self._buffers: list[OutBuffer] = []
        index = {(c, s): i for i, (c, s, _) in enumerate(stream_table(plan))}
        spec = plan.components[self.component]
        rng = random.Random(seed)
        for name, stream in sorted(spec.outputs.items()):
            out = _StreamOut(name, index[(self.component, name)], stream.fields, stream.direct)
            routers = []
            for bolt, grouping in plan.subscribers(self.component, name):
                buffers = [OutBuffer(out.index, t) for t in layout.component_tasks[bolt]]
                self._buffers.extend(buffers)
                if grouping.kind == DIRECT:
                    out.direct.update({b.task: Target([b]) for b in buffers})
                    continue
                routers.append(make_router(grouping, buffers, stream.fields, local_tasks, rng,
                                           context, name))
            if len(routers) == 1:
                out.route = routers[0]
            elif routers:
                out.route = lambda values, rs=tuple(routers): combine([r(values) for r in rs])
            self._streams[name] = out

    # -- errors -----------------------------------------------------------------

    def _loc(self) -> str:
        return where(self.topology, self.component, self.task)

    def _bad_emit(self, values: Any, stream: str, direct_task: int | None) -> ComponentError:
        out = self._streams.get(stream)
        if out is None:
            msg = (f"{self._loc()}: emit on undeclared stream {stream!r}; "
                   f"declared streams are {sorted(self._streams)}")
        elif not isinstance(values, _SEQUENCES):
            msg = (f"{self._loc()}: emit on stream {stream!r} expects a list of values, "
                   f"received {type(values).__name__} {values!r}")
        elif len(values) != out.nfields:
            msg = (f"{self._loc()}: emit on stream {stream!r} expects {out.nfields} values "
                   f"for fields {list(out.fields)}, received {len(values)}: {values!r}")
        elif direct_task is None:
            msg = (f"{self._loc()}: stream {stream!r} is direct; emit on it needs "
                   "direct_task")
        else:
            msg = (f"{self._loc()}: direct emit to task {direct_task} on stream {stream!r}, "
                   "which is not a direct stream; declare it direct or drop direct_task")
        return ComponentError(msg)

    def _target(self, out: _StreamOut, values: Any, direct_task: int | None) -> Target:
        """Route an emit that names a task or goes to a direct stream."""
        if direct_task is None or not out.is_direct:
            raise self._bad_emit(values, out.name, direct_task)
        # Storm drops a direct emit to a task that does not subscribe.
        return out.direct.get(direct_task, NOWHERE)

    # -- flushing ---------------------------------------------------------------

    def data_frames(self, out: list[bytes]) -> SerializationError | None:
        """Append a frame per non-empty buffer to `out`; return the first encoding error.

        A buffer the serializer refuses is re-encoded tuple by tuple, so every value it
        accepts is still sent: nothing already accepted is lost to one bad emit.
        """
        encode = self._encode
        error = None
        for b in self._buffers:
            values = b.values
            if not values:
                continue
            try:
                blob = encode(values)
            except Exception as exc:  # noqa: BLE001 - reported with the offending tuple
                error = error or self._salvage(b, exc, out)
            else:
                ids = frames.ints_to_bytes(b.ids) if self.acking else b""
                out.append(frames.data_frame(b.task, self.task, b.stream, blob, ids))
            b.values = []
            b.ids = []
        return error

    def _salvage(self, buf: OutBuffer, exc: Exception, out: list[bytes]) -> SerializationError:
        good, good_ids, bad = [], [], None
        pos = 0
        for values in buf.values:
            width = 1 + 2 * buf.ids[pos] if self.acking else 0
            try:
                self._encode([values])
            except Exception as err:  # noqa: BLE001
                bad = bad or (values, err)
            else:
                good.append(values)
                good_ids.extend(buf.ids[pos:pos + width])
            pos += width
        if good:
            ids = frames.ints_to_bytes(good_ids) if self.acking else b""
            out.append(frames.data_frame(buf.task, self.task, buf.stream, self._encode(good), ids))
        values, err = bad or (buf.values, exc)
        msg = (f"{self._loc()}: emitted values the {self._serializer} serializer cannot encode "
               f"(for task {buf.task}): {values!r} ({err}); expected "
               + ("picklable values" if self._serializer == "pickle" else
                  "JSON-like values (None, bool, int, float, str, list, dict)"))
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


class SpoutEmitter(Emitter):
    """The spout's collector. Tracked emits are remembered until acked, failed or expired."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._root_base = self.task << frames.ROOT_TASK_SHIFT
        self._seq = itertools.count(1)
        self.pending: dict[int, tuple[Any, float]] = {}  # root -> (msg_id, emit time)
        self.ack_now: list[Any] = []  # at-most-once: msg ids acked as soon as emitted
        self._inits: list[int] = []
        self.errors: list[BaseException] = []

    def emit(self, values: list, msg_id: Any = None, stream: str = "default",
             direct_task: int | None = None) -> tuple[int, ...]:
        out = self._streams.get(stream)
        if out is None or values.__class__ not in _SEQUENCES or len(values) != out.nfields:
            raise self._bad_emit(values, stream, direct_task)
        target = out.route(values) if direct_task is None and not out.is_direct \
            else self._target(out, values, direct_task)
        self.emitted += 1
        if msg_id is not None and self.acking:
            root = self._root_base | (next(self._seq) & frames.ROOT_SEQ_MASK)
            xor = 0
            for b in target.buffers:
                edge = self._rand(63) | 1
                xor ^= edge
                b.values.append(values)
                b.ids += (1, root, edge)
            self._inits += (root, xor)
            self.pending[root] = (msg_id, _monotonic())
        else:
            for b in target.buffers:
                b.values.append(values)
                if self.acking:
                    b.ids.append(0)
            if msg_id is not None:
                self.ack_now.append(msg_id)
        return target.tasks

    def report_error(self, error: BaseException) -> None:
        self.errors.append(error)

    def _control_frames(self, out: list[bytes], before: bool) -> None:
        # Inits go first: the stream manager must know a root before any ack for it.
        if before and self._inits:
            out.append(frames.int_frame(frames.INIT, self.task, self._inits))
            self._inits = []


class BoltEmitter(Emitter):
    """The bolt's collector: anchored emits, acks and fails."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._acks: dict[int, int] = {}  # root -> XOR of this flush's acks for it
        self._fails: list[int] = []
        self.acked = 0
        self.failed = 0
        self.errors: list[BaseException] = []

    def emit(self, values: list, stream: str = "default", anchors: Any = None,
             direct_task: int | None = None) -> tuple[int, ...]:
        out = self._streams.get(stream)
        if out is None or values.__class__ not in _SEQUENCES or len(values) != out.nfields:
            raise self._bad_emit(values, stream, direct_task)
        target = out.route(values) if direct_task is None and not out.is_direct \
            else self._target(out, values, direct_task)
        self.emitted += 1
        if not self.acking:
            for b in target.buffers:
                b.values.append(values)
            return target.tasks
        if anchors is not None and anchors.__class__ is Tuple:
            anchors = (anchors,)
        for b in target.buffers:
            b.values.append(values)
            if not anchors:
                b.ids.append(0)
            elif len(anchors) == 1 and anchors[0]._ids is not None \
                    and len(anchors[0]._ids) == 2:
                anchor = anchors[0]
                edge = self._rand(63) | 1
                anchor._ackval ^= edge
                b.ids += (1, anchor._ids[0], edge)
            else:
                self._anchor_many(b, anchors)
        return target.tasks

    def _anchor_many(self, b: OutBuffer, anchors: Any) -> None:
        edges: dict[int, int] = {}
        for anchor in anchors:
            ids = anchor._ids
            if ids is None:
                continue
            edge = self._rand(63) | 1
            anchor._ackval ^= edge
            for j in range(0, len(ids), 2):
                edges[ids[j]] = edges.get(ids[j], 0) ^ edge
        b.ids.append(len(edges))
        for root, edge in edges.items():
            b.ids += (root, edge)

    def ack(self, tup: Tuple) -> None:
        self.acked += 1
        ids = tup._ids
        if ids is None:
            return
        tup._ids = None  # a second ack must not cancel the first
        acks = self._acks
        val = tup._ackval
        for j in range(0, len(ids), 2):
            root = ids[j]
            acks[root] = acks.get(root, 0) ^ ids[j + 1] ^ val

    def fail(self, tup: Tuple) -> None:
        self.failed += 1
        ids = tup._ids
        if ids is None:
            return
        tup._ids = None
        self._fails += ids[0::2]

    def report_error(self, error: BaseException) -> None:
        self.errors.append(error)

    def _control_frames(self, out: list[bytes], before: bool) -> None:
        if before:
            return
        if self._acks:
            flat = [v for pair in self._acks.items() for v in pair]
            out.append(frames.int_frame(frames.ACK, 0, flat))
            self._acks = {}
        if self._fails:
            out.append(frames.int_frame(frames.FAIL, 0, self._fails))
            self._fails = []
