"""Hosting a pystorm (or streamparse) component in the task's process.

Most components run lean (lean.py): the runtime's loops call them. This module keeps
the pulled host for the others: pystorm's own `run()` loop runs unchanged in the main
thread. Only its serializer is
replaced: instead of JSON lines on stdin and stdout, messages are Python objects handed
to and taken from the StormPeer, which pulls the next tuple or command from the runtime
when pystorm asks for its next message. Auto-ack, auto-anchor, auto-fail, batching,
ticks and ReliableSpout's replays are therefore pystorm's own code.
"""

from __future__ import annotations

import io
import logging
import os
import threading
from collections import deque
from collections.abc import Callable
from itertools import count
from typing import Any

from pystorm.bolt import BatchingBolt
from pystorm.exceptions import StormWentAwayError
from pystorm.serializers.serializer import Serializer

from heronbridge.runtime.api import LoopOwner, Tuple
from heronbridge.runtime.config import EFFECTIVELY_ONCE, RELIABILITY_MODE
from heronbridge.runtime.errors import where

from ..common.hooks import MessageHook, Probe, message_hook
from ..common.logs import prefixed_log
from ..common.peer import StormPeer
from . import ShimError, keys
from .lean import (
    STORM_WENT_AWAY,
    LeanHost,
    LeanSpout,
    bolt_face,
    forget_previous_component,
    lean_capable,
    load_class,
    wake_face,
)
from .state import after_save, before_save, is_stateful


class PendingKey(tuple):
    """A key of a task's state under which the host saves a BatchingBolt's input tuples
    not yet in a batch it processed (the spouts rewind to after them at a rollback, so
    unsaved they would be lost), grouped by the values their fields grouping hashes: a
    state repartitioned by key for a new parallelism takes them to the task that now
    receives such tuples. Equal to no key of the component's own."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return type(other) is PendingKey and tuple.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:  # by repr: grouped values may be lists (JSON arrays)
        return hash(("heronbridge.storm.pending", repr(tuple(self))))


def pending_tuples(comp: Any, context: Any) -> dict[PendingKey, list]:
    """A BatchingBolt's unprocessed input tuples, by PendingKey, each as
    (arrival, source, stream, source task, values)."""
    fields = {(i.component, i.stream): i.grouping.fields for i in context.sources}
    where_in: dict[tuple[str, str], list[int]] = {}
    out: dict[PendingKey, list] = {}
    arrival = count()
    for batch in comp._batches.values():
        for t in batch:
            source = (t.component, t.stream)
            at = where_in.get(source)
            if at is None:
                names = context.streams[t.component][t.stream].fields
                at = where_in[source] = [names.index(f) for f in fields.get(source, ())]
            values = list(t.values)
            out.setdefault(PendingKey(values[i] for i in at), []).append(
                (next(arrival), t.component, t.stream, t.task, values))
    return out


class Bridge(Serializer):
    """A pystorm serializer that exchanges messages with the StormPeer in-process."""

    def __init__(self, peer: StormPeer, host: Any, reader_lock: Any, writer_lock: Any,
                 hook: MessageHook | None = None) -> None:
        super().__init__(None, None, reader_lock, writer_lock)
        self.peer = peer
        self.host = host
        self.hook = hook
        self.pending: deque[Any] = deque()  # for the component: first, the handshake
        self.main = threading.main_thread()
        # A bolt's wake() (heronbridge's call), made here between its input tuples and
        # again when the seconds it returned have passed, from pystorm's own loop.
        self.wake: Callable[[], float | None] | None = None

    def read_message(self) -> Any:
        if self.pending:
            return self.pending.popleft()
        if self.hook is None:
            return self._next()
        while not self.pending:  # until the hook lets a message through
            self.feed(self._next())
        return self.pending.popleft()

    def feed(self, msg: Any) -> None:
        """Queue a message for the component, through the hook if there is one."""
        if self.hook is None:
            self.pending.append(msg)
            return
        mine, back = self.hook.down(msg)
        self.pending.extend(mine)
        if back:
            self._deliver(back)

    def _next(self) -> Any:
        peer, host = self.peer, self.host
        if peer.replies:
            return peer.replies.popleft()
        if host.is_spout:
            event = host.next_command()
            if event is None:
                raise StormWentAwayError
            return peer.command_message(*event)
        wake = self.wake
        after = wake() if wake is not None else None
        tup = host.next_tuple(timeout=after)
        while tup is None and wake is not None and after is not None and not host.stopping:
            after = wake()
            tup = host.next_tuple(timeout=after)
        if tup is None:
            raise StormWentAwayError
        return peer.tuple_message(tup)

    def send_message(self, msg_dict: dict) -> None:
        if self.hook is not None:
            self._deliver(self.hook.up(msg_dict))
            return
        with self._writer_lock, self.host.lock:
            self.peer.receive(msg_dict)
        if threading.current_thread() is not self.main:
            self.host.wake()  # e.g. TicklessBatchingBolt's batcher thread emitted

    def _deliver(self, msgs: list[Any]) -> None:
        with self._writer_lock, self.host.lock:
            for msg in msgs:
                self.peer.receive(msg)
        if threading.current_thread() is not self.main:
            self.host.wake()


class PystormComponent(LoopOwner):
    """The runtime component that hosts one pystorm Spout or Bolt class.

    Lean (lean.py) unless the class runs threads of its own or a message hook that only
    speaks messages is set: then pystorm's own loop pulls from the task (`run`).
    """

    _cls: type | None = None
    _hook: MessageHook | None = None
    _state: dict | None = None  # the runtime's checkpointed dict, in a stateful topology
    _pending: Any = ()  # a BatchingBolt's unprocessed tuples, for the new instance
    _pending_keys: Any = ()  # where pre_save put them in the state
    _component: Any = None  # the pystorm instance
    _peer: StormPeer | None = None  # what the component sends goes to it
    wake: Callable[[], float | None] | None = None  # the component's wake(), lean only

    # -- the runtime's stateful contract -------------------------------------------------

    def init_state(self, state: dict) -> None:
        """Every task of a checkpointing topology takes part: a pystorm component with
        `init_state` (StatefulMixin's) gets `state` before its `initialize`; for the
        others it holds only what the host itself saves (a BatchingBolt's batches)."""
        self._state = state
        saved = [k for k in state if type(k) is PendingKey]
        self._pending = sorted((t for k in saved for t in state.pop(k)), key=lambda t: t[0])

    def pre_save(self, checkpoint_id: str) -> None:
        comp, state = self._component, self._state
        if state is None:
            return
        if is_stateful(comp):
            before_save(comp, state, checkpoint_id)
        if isinstance(comp, BatchingBolt):
            for key in self._pending_keys:
                state.pop(key, None)
            pending = pending_tuples(comp, self.context)
            state.update(pending)
            self._pending_keys = list(pending)

    def own_metrics(self) -> dict:
        """What the component's own `own_metrics()` says (heronbridge's call: Storm never
        makes it); pystorm's report_metric goes to the task's counters as it comes."""
        mine = getattr(self._component, "own_metrics", None)
        return mine() if mine is not None else {}

    def post_save(self, checkpoint_id: str) -> None:
        comp = self._component
        if self._state is not None and comp is not None:
            after_save(comp, checkpoint_id)

    def _load(self) -> type:
        """The pystorm class (and the message hook), once config and context are set."""
        if self._cls is None:
            conf, context = self.config, self.context
            self._cls = load_class(conf, context.component_id, context.task_id)
            self._hook = _hook(conf, context.component_id, context.task_id)
        return self._cls

    @property
    def owns_loop(self) -> bool:
        cls, hook = self._load(), self._hook
        why = ("it runs threads of its own" if not lean_capable(cls) else
               f"{keys.LEAN} is false" if self.config.get(keys.LEAN) is False else
               "its message hook only speaks messages"
               if hook is not None and not isinstance(hook, Probe) else None)
        if why is not None and self.config.get(RELIABILITY_MODE) == EFFECTIVELY_ONCE:
            # A rollback rebuilds the component between two calls of the task's loops;
            # pystorm's own loop, and the threads beside it, offer no such point.
            context = self.context
            msg = (f"{where(context.topology_name, context.component_id, context.task_id)}: "
                   f"{cls.__name__} needs pystorm's own loop ({why}), which "
                   f"{EFFECTIVELY_ONCE} cannot checkpoint; expected a component without "
                   "threads of its own")
            raise ShimError(msg)
        return why is not None

    # -- lean: the runtime's loops call these ---------------------------------------------

    def _lean(self, context: Any, collector: Any, is_spout: bool) -> LeanHost:
        _keep_runtime_logs_apart(context)
        host = LeanHost(self._load(), self.config, context, collector, is_spout, self._hook,
                        self._state)
        self._component, self._peer = host.comp, host.peer
        return host

    def open(self, config: dict, context: Any, collector: Any) -> None:
        face = LeanSpout(self._lean(context, collector, True))
        self.next_tuple, self.ack, self.fail = face.next_tuple, face.ack, face.fail
        self.activate, self.deactivate, self.close = face.activate, face.deactivate, face.close

    def prepare(self, config: dict, context: Any, collector: Any) -> None:
        host = self._lean(context, collector, False)
        for _, source, stream, task, values in self._pending:  # back into their batches
            host.execute(Tuple.make(source, stream, task, values))
        self._pending = ()
        self.execute, self.cleanup = bolt_face(host)
        wake = wake_face(host)
        if wake is not None:
            self.wake = wake

    # -- pulled: pystorm's own loop ------------------------------------------------------

    def run(self, host: Any) -> None:
        _keep_runtime_logs_apart(host.context)
        cls = self._load()
        peer = self._peer = StormPeer(host, pystorm=True)
        # pystorm builds its own serializer around the streams it is given; it is replaced
        # before anything is read or written.
        component = cls(input_stream=io.BytesIO(), output_stream=io.BytesIO(),
                        serializer="json")
        bridge = Bridge(peer, host, component._reader_lock, component._writer_lock,
                        self._hook)
        component.serializer = bridge
        if not host.is_spout and callable(getattr(component, "wake", None)):
            bridge.wake = component.wake
        component.log = prefixed_log(component)  # its lines reach the task log as they come
        pid_dir = os.path.join(os.getcwd(), ".pids")
        os.makedirs(pid_dir, exist_ok=True)
        bridge.feed(peer.handshake(pid_dir))

        def leave(code: int) -> None:
            host.exit(0 if code == STORM_WENT_AWAY and host.stopping else code)

        component._exit = leave  # pystorm's exits go through the host, which flushes first
        component.run()


def _hook(config: dict, component: str, task: int) -> MessageHook | None:
    return message_hook(config, f"{component!r} (task {task})")


def _keep_runtime_logs_apart(context: Any) -> None:
    """pystorm sends every record reaching the root logger to Storm (here: to the peer,
    which logs it). The runtime's own records must not take that loop, so its handlers
    move from the root logger to the `heronbridge` logger; those an earlier component of
    this task had (before a rollback) go."""
    forget_previous_component(context.component_id, context.task_id)
    root = logging.getLogger()
    ours = logging.getLogger("heronbridge")
    for handler in list(root.handlers):
        root.removeHandler(handler)
        ours.addHandler(handler)
    ours.propagate = False
    if ours.level == logging.NOTSET:
        ours.setLevel(logging.INFO)
