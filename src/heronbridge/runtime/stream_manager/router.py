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

The drop policy: a frame whose destination task is not connected is counted and dropped,
and the trees of its tracked tuples fail back to their spouts at once, rather than at
their timeout (never, with timeouts off). The rollback gate (effectively-once): a frame
that its source sent before the current rollback (`epoch`) is discarded.
"""

from __future__ import annotations

import logging
from array import array
from collections.abc import Callable, Iterable
from typing import Protocol

from google.protobuf.message import Message

from ..api.tuple import MULTI
from ..wire import frames
from .acking import XorTracker

log = logging.getLogger("heronbridge.runtime.stream_manager")

SHIFT = frames.ROOT_TASK_SHIFT


class Endpoint(Protocol):
    """A local task's link or a peer stream manager's, as the router sees it."""

    epoch: int  # effectively-once: the rollback after which its frames were sent

    def peer_name(self) -> str: ...


Outgoing = dict[Endpoint, list[bytes | memoryview]]


class Router:
    def __init__(self, name: str, *, acking: bool, gated: bool, xor_buckets: int,
                 decode: Callable[[bytes], list],
                 on_control: Callable[[Endpoint, Message], None]) -> None:
        self.name = name  # for logs: the stream manager's id
        self.acking = acking
        self.gated = gated
        self.decode = decode  # a data frame's records (the topology's serializer)
        self.on_control = on_control
        self.route: dict[int, Endpoint] = {}  # destination task -> endpoint
        self.local_spouts: frozenset[int] = frozenset()
        self.all_spouts_local = True
        self.tracker = XorTracker(xor_buckets)
        self.epoch = 0  # the current rollback (effectively-once)
        self.routed = self.bytes_routed = self.dropped = self.malformed = 0
        self.discarded = 0  # frames sent before the current rollback, not forwarded
        self.acked = self.failed = self.expired = 0

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
                        self._drop(view[start:end], outgoing)
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

    def undeliverable(self, chunks: list) -> Outgoing:
        """Frames for an endpoint that closed before they could be written."""
        outgoing: Outgoing = {}
        for chunk in chunks:
            self._drop(chunk, outgoing)
        return outgoing

    def expire(self) -> Outgoing:
        """Age the tracked trees by one bucket; those that timed out go to their spouts."""
        outgoing: Outgoing = {}
        self._notify(frames.EXPIRED, self.tracker.rotate(), outgoing)
        return outgoing

    def _drop(self, frame: memoryview, outgoing: Outgoing) -> None:
        self.dropped += 1
        if frame[4] != frames.DATA or not self.acking:
            return
        try:
            records = self.decode(bytes(frame[frames.DATA_HEADER_SIZE:]))
        except Exception as exc:  # noqa: BLE001 - e.g. a pickled class not importable here
            log.warning("%s: cannot read the roots of a dropped frame (%s: %s); its trees "
                        "fail at their timeout", self.name, type(exc).__name__, exc)
            return
        roots: set[int] = set()
        for record in records:
            if len(record) == 3:
                root = record[1]
                if root > 0:
                    roots.add(root)
                elif root == MULTI:
                    roots.update(record[2][1::2])
        if roots:
            self._fails(roots, outgoing)

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
