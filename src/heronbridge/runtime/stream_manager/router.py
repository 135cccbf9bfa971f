"""The stream manager's data path, without sockets: frames in, frames out.

`receive` takes what one endpoint sent (a read's bytes and the frames found in them) and
returns what is to be written, `{endpoint: [chunks]}`, for the caller to write:

- data and marker frames go to the endpoint that holds their destination task, on their
  9-byte header alone (tuple values are never decoded here);
- inits and acks go through the XOR tracker of the local spouts, or on to the stream
  manager that holds the root's spout; fails likewise; the trees they settle come out
  as acked and failed frames for the spouts (`expire` adds the trees that timed out);
- control frames go to `on_control` in their place in the stream, so that what they
  change (a rollback's epoch) holds for the frames after them.

The policy for a frame whose destination cannot be reached now (undelivered.py): under
at-least-once a data frame for a task the physical plan still has is held until the task
can be reached (`release`), and `on_held` says when frames start and stop being held (the
caller pauses the spouts meanwhile); the trees of a frame given up (held too long, too
many bytes held, or for a task no plan has) fail back to their spouts no sooner than the
message timeout (`settle`). Other frames are counted and dropped. The rollback gate
(effectively-once): a frame that its source sent before the current rollback (`epoch`)
is discarded.
"""

from __future__ import annotations

import logging
import time
from array import array
from collections.abc import Callable, Iterable, Sequence
from typing import Protocol

from google.protobuf.message import Message

from ..api.tuple import MULTI
from ..config import TopologyConfig
from ..wire import frames
from ..wire.serde import make_serializer
from .acking import XorTracker
from .undelivered import Undelivered

log = logging.getLogger("heronbridge.runtime.stream_manager")

SHIFT = frames.ROOT_TASK_SHIFT
HOLD_SECS = 30.0  # at least; the executor's longest restart back-off (scheduler/restarts.py)


class Endpoint(Protocol):
    """A local task's link or a peer stream manager's, as the router sees it."""

    epoch: int  # effectively-once: the rollback after which its frames were sent

    def peer_name(self) -> str: ...


Outgoing = dict[Endpoint, list[bytes | memoryview]]


class Router:
    def __init__(self, name: str, *, acking: bool, gated: bool, xor_buckets: int,
                 decode: Callable[[bytes], list],
                 on_control: Callable[[Endpoint, Message], None],
                 undelivered: Undelivered | None = None,
                 on_held: Callable[[bool], None] = lambda held: None) -> None:
        self.name = name  # for logs: the stream manager's id
        self.acking = acking
        self.gated = gated
        self.decode = decode  # a data frame's records (the topology's serializer)
        self.on_control = on_control
        self.undelivered = undelivered if undelivered is not None \
            else Undelivered(HOLD_SECS, 30.0, 16 << 20)
        self.on_held = on_held  # frames started (True) or stopped being held
        self.holding = False
        self.planned: frozenset[int] | None = None  # the physical plan's tasks, once known
        self.route: dict[int, Endpoint] = {}  # destination task -> endpoint
        self.local_spouts: frozenset[int] = frozenset()
        self.all_spouts_local = True
        self.tracker = XorTracker(xor_buckets)
        self.epoch = 0  # the current rollback (effectively-once)
        self.routed = self.bytes_routed = self.dropped = self.malformed = 0
        self.discarded = 0  # frames sent before the current rollback, not forwarded
        self.acked = self.failed = self.expired = 0

    @classmethod
    def of(cls, name: str, conf: TopologyConfig, topology: str,
           on_control: Callable[[Endpoint, Message], None],
           on_held: Callable[[bool], None] = lambda held: None) -> Router:
        """The router a topology's config asks for (`topology` names it in errors)."""
        timeout = conf.message_timeout_secs
        return cls(name, acking=conf.acking, gated=conf.stateful, xor_buckets=conf.xor_buckets,
                   decode=make_serializer(conf.serializer, topology).decode,
                   on_control=on_control, on_held=on_held,
                   undelivered=Undelivered(max(timeout, HOLD_SECS), timeout,
                                           conf.held_max_bytes))

    def place(self, local_spouts: Iterable[int], all_spouts_local: bool) -> None:
        """Which spout tasks this stream manager tracks the trees of."""
        self.local_spouts = frozenset(local_spouts)
        self.all_spouts_local = all_spouts_local

    def forget_spout(self, task: int) -> None:
        """A spout task gone or starting a new life: its trees are nobody's now."""
        self.tracker.forget_task(task, SHIFT)

    def receive(self, source: Endpoint, data: bytes, found: list) -> Outgoing:
        view = memoryview(data)
        route = self.route
        outgoing: Outgoing = {}
        gated = self.gated
        for kind, dest, start, end in found:
            try:
                if kind in (frames.DATA, frames.MARKER):
                    if gated and source.epoch != self.epoch:
                        self.discarded += 1  # sent before the current rollback
                        continue
                    link = route.get(dest)
                    if link is None:
                        self._drop(view[start:end])
                        continue
                    chunks = outgoing.get(link)
                    if chunks is None:
                        outgoing[link] = [view[start:end]]
                    else:
                        chunks.append(view[start:end])
                elif kind == frames.ACK:
                    self._acks(frames.ints_from(view[start + frames.HEADER_SIZE:end]), outgoing)
                elif kind == frames.INIT:
                    done: list[int] = []
                    self.tracker.init(
                        frames.ints_from(view[start + frames.HEADER_SIZE:end]).tolist(), done)
                    self._notify(frames.ACKED, done, outgoing)
                elif kind == frames.FAIL:
                    self._fails(frames.ints_from(view[start + frames.HEADER_SIZE:end]), outgoing)
                elif kind == frames.CONTROL:
                    self.on_control(source, frames.parse_control(view[start:end]))
            except Exception as exc:  # noqa: BLE001 - one bad frame costs only itself
                self.malformed += 1
                log.warning("%s sent a malformed %s frame (%s: %s); skipped it and kept the "
                            "others", source.peer_name(), frames.KIND_NAMES[kind],
                            type(exc).__name__, exc)
        self.routed += len(found)
        self.bytes_routed += len(data)
        return outgoing

    def undeliverable(self, chunks: list) -> None:
        """Frames for an endpoint that closed before they could be written."""
        for chunk in chunks:
            self._drop(chunk)

    def expire(self) -> Outgoing:
        """Age the tracked trees by one bucket; those that timed out go to their spouts."""
        outgoing: Outgoing = {}
        self._notify(frames.EXPIRED, self.tracker.rotate(), outgoing)
        return outgoing

    def follow_plan(self, tasks: frozenset[int]) -> None:
        """The physical plan's tasks: frames held for a task it no longer has are given up."""
        self.planned = tasks
        for task in self.undelivered.tasks():
            if task not in tasks:
                self._give_up(self.undelivered.forget(task))
        self._held_changed()

    def release(self, reachable: Callable[[Endpoint], bool]) -> Outgoing:
        """The frames held for tasks whose endpoint is `reachable` again, to deliver."""
        outgoing: Outgoing = {}
        for task in self.undelivered.tasks():
            link = self.route.get(task)
            if link is not None and reachable(link):
                outgoing.setdefault(link, []).extend(self.undelivered.release(task))
        self._held_changed()
        return outgoing

    def settle(self, now: float) -> Outgoing:
        """Give up the frames held too long; fail the trees whose time has come."""
        outgoing: Outgoing = {}
        if self.undelivered:
            self._give_up(self.undelivered.expired(now))
            self._held_changed()
            self._fails(self.undelivered.fails_due(now), outgoing)
        return outgoing

    def _drop(self, frame: memoryview | bytes) -> None:
        """A frame for a task that cannot be reached now: held for it while the plan has
        it (under at-least-once), its trees failed back no sooner than their timeout
        otherwise."""
        if frame[4] != frames.DATA or not self.acking:
            self.dropped += 1
            return
        now = time.monotonic()
        task = frames.HEADER.unpack_from(frame)[2]
        if self.planned is None or task in self.planned:
            self._give_up(self.undelivered.hold(task, bytes(frame), now))
            self._held_changed()
        else:
            self._give_up([(now, frame)])

    def _give_up(self, lost: Sequence[tuple[float, bytes | memoryview]]) -> None:
        """Frames that will not be delivered: their trees fail a message timeout after
        they were held (or dropped)."""
        for since, frame in lost:
            self.dropped += 1
            self.undelivered.fail_later(self._roots(frame), since)

    def _held_changed(self) -> None:
        held = bool(self.undelivered.tasks())
        if held != self.holding:
            self.holding = held
            self.on_held(held)

    def _roots(self, frame: memoryview | bytes) -> list[int]:
        """The roots of a data frame's tracked tuples."""
        try:
            records = self.decode(bytes(frame[frames.DATA_HEADER_SIZE:]))
        except Exception as exc:  # noqa: BLE001 - e.g. a pickled class not importable here
            log.warning("%s: cannot read the roots of a dropped frame (%s: %s); its trees "
                        "fail at their timeout", self.name, type(exc).__name__, exc)
            return []
        roots: set[int] = set()
        for record in records:
            if len(record) >= 3:  # a fourth element: where a Java task's record holds Kryo bytes
                root = record[1]
                if root > 0:
                    roots.add(root)
                elif root == MULTI:
                    roots.update(record[2][1::2])
        return list(roots)

    def _acks(self, acks: array, outgoing: Outgoing) -> None:
        pairs = acks.tolist()
        if not self.all_spouts_local:
            local: list[int] = []
            remote: dict[Endpoint, list[int]] = {}
            for i in range(0, len(pairs), 2):
                task = pairs[i] >> SHIFT
                if task in self.local_spouts:
                    local += pairs[i:i + 2]
                else:
                    link = self.route.get(task)
                    if link is not None:
                        remote.setdefault(link, []).extend(pairs[i:i + 2])
            for link, part in remote.items():
                outgoing.setdefault(link, []).append(frames.int_frame(frames.ACK, 0, part))
            pairs = local
        done: list[int] = []
        self.tracker.ack(pairs, done)
        self._notify(frames.ACKED, done, outgoing)

    def _fails(self, roots: Iterable[int], outgoing: Outgoing) -> None:
        local = []
        for root in roots:
            task = root >> SHIFT
            if task in self.local_spouts:
                local.append(root)
            else:
                link = self.route.get(task)
                if link is not None:
                    outgoing.setdefault(link, []).append(
                        frames.int_frame(frames.FAIL, 0, [root]))
        failed: list[int] = []
        self.tracker.fail(local, failed)
        self._notify(frames.FAILED, failed, outgoing)

    def _notify(self, kind: int, roots: list[int], outgoing: Outgoing) -> None:
        """Tell local spouts that trees completed, failed or expired."""
        if not roots:
            return
        if kind == frames.ACKED:
            self.acked += len(roots)
        elif kind == frames.FAILED:
            self.failed += len(roots)
        else:
            self.expired += len(roots)
        if len(self.local_spouts) == 1:
            by_task = {next(iter(self.local_spouts)): roots}
        else:
            by_task = {}
            for root in roots:
                by_task.setdefault(root >> SHIFT, []).append(root)
        for task, part in by_task.items():
            link = self.route.get(task)
            if link is not None:
                outgoing.setdefault(link, []).append(frames.int_frame(kind, task, part))
