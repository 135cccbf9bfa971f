"""The lean in-process host: a pystorm (or streamparse) component called by the
runtime's own spout and bolt loops, its wire-level methods bound to the collector.

pystorm keeps its logic: `Bolt._run` (auto-ack, auto-anchor through `_current_tups`),
`_handle_run_exception` (auto-fail, `raise_exception`), BatchingBolt's batches and
ticks, ReliableSpout's replays, `initialize` after pystorm's own handshake and logging
set-up. Only the methods that would build a multilang message are replaced, on the
instance and only where the class keeps pystorm's own: `read_tuple` builds the Tuple
from the runtime's (a cached namedtuple type per source stream), `emit`, `ack` and
`fail` call the collector. Everything else a component sends (log, error, metrics,
sync, and the emits of a class that overrides `emit`) goes to the StormPeer as the
message pystorm made, without pipes, locks or threads in between.

A component whose class runs threads of its own (TicklessBatchingBolt, or any class whose
own modules use threads) keeps the pulled host (inprocess.py), whose lock serialises
them with the task's loop.
"""

from __future__ import annotations

import functools
import io
import logging
import os
import re
import sys
from collections import deque
from collections.abc import Callable
from itertools import count
from typing import Any

import pystorm.bolt
import pystorm.component
import pystorm.spout
from pystorm.component import Tuple as StormTuple

from heronbridge.runtime.errors import where
from heronbridge.runtime.plan.logical import resolve_import_path

from ..common.hooks import Probe
from ..common.logs import prefixed_log
from ..common.peer import StormPeer, multilang_values
from . import ShimError, keys
from .state import is_stateful

STORM_WENT_AWAY = 2
_new_tuple = tuple.__new__
log = logging.getLogger("heronbridge.shims.storm.lean")


class TupleId(str):
    """A bolt input's id as the component sees it: a string, as Storm's are, that holds
    the runtime's tuple until the component acks or fails it (then None)."""


# Where a component's own code may start threads. pystorm lets any thread emit, ack or
# fail (its writer lock serialises them); the lean host's calls are the task loop's, so a
# class whose modules name any of these keeps pystorm's loop and its lock.
_THREADS = re.compile(rb"\b(threading|_thread|concurrent\.futures|multiprocessing\.pool|"
                      rb"gevent|eventlet)\b")
_FRAMEWORK = ("pystorm", "streamparse", "builtins", "abc")


def lean_capable(cls: type) -> bool:
    """Whether `cls` can run under the lean host: not when it starts threads that may
    emit beside the task's loop (TicklessBatchingBolt, or a class whose own modules
    use threads)."""
    if issubclass(cls, pystorm.bolt.TicklessBatchingBolt):
        return False
    return not any(_uses_threads(k.__module__) for k in cls.__mro__
                   if k.__module__.split(".")[0] not in _FRAMEWORK)


@functools.cache
def _uses_threads(module_name: str) -> bool:
    path = getattr(sys.modules.get(module_name), "__file__", None)
    try:
        with open(path, "rb") as f:  # noqa: PTH123 - a module's own file, once
            return _THREADS.search(f.read()) is not None
    except (OSError, TypeError):
        return False  # no source to read (built in, or frozen): nothing of the user's


# The handlers pystorm's set-up of a task's component added to the root logger, by
# (component, task). A rollback builds a new component for the task in the same process:
# the old ones must not stay (they would send every record to the old component's peer,
# or write its log file twice).
_pystorm_handlers: dict[tuple[str, int], list[logging.Handler]] = {}


def forget_previous_component(component: str, task: int) -> None:
    """Remove and close what an earlier component of this task left on the root logger
    (or on the runtime's, where the set-up of a later task of the process moved it)."""
    loggers = (logging.getLogger(), logging.getLogger("heronbridge"))
    for handler in _pystorm_handlers.pop((component, task), ()):
        for logger in loggers:
            logger.removeHandler(handler)
        handler.close()


def set_up(comp: Any, storm_conf: dict, storm_context: dict, state: dict | None) -> None:
    """pystorm's `_setup_component` (its logging, remembered to be undone by the next
    component), then, for a stateful component on a checkpointing host, `init_state`
    with the state of the last checkpoint: both before `initialize`."""
    root = logging.getLogger()
    before = set(root.handlers)
    comp._setup_component(storm_conf, storm_context)
    _pystorm_handlers[comp.component_name, comp.task_id] = [
        h for h in root.handlers if h not in before]
    if state is not None and is_stateful(comp):
        comp.init_state(state)


def load_class(config: dict, component: str, task: int) -> type:
    class_path = config.get(keys.CLASS)
    resources = config.get(keys.RESOURCES)
    if resources:
        os.chdir(resources)  # Storm runs a component in its resources folder
        if resources not in sys.path:
            sys.path.insert(0, resources)
    try:
        return resolve_import_path(class_path.replace(":", ".") if class_path else "")
    except Exception as exc:
        msg = (f"{component!r} (task {task}): cannot load class {class_path!r}: "
               f"{type(exc).__name__}: {exc}")
        raise ShimError(msg) from exc


class _Wire:
    """pystorm's serializer slot: what the component sends goes to the peer at once."""

    output_stream = None  # not stdout: pystorm leaves print() alone (it reaches the log)

    def __init__(self, peer: StormPeer, probe: Probe | None) -> None:
        self.peer = peer
        self.send_message = peer.receive
        if probe is not None:  # it counts the emits that still come as messages
            up, receive = probe.up, peer.receive

            def send_message(msg: Any) -> None:
                for out in up(msg):
                    receive(out)

            self.send_message = send_message
        self.pending: deque[Any] = deque()

    def read_message(self) -> Any:
        """The handshake, then the task id lists the peer owes the component."""
        if self.pending:
            return self.pending.popleft()
        if self.peer.replies:
            return self.peer.replies.popleft()
        msg = (f"{self.peer.loc}: the component waited for a message outside pystorm's "
               "handshake and emits")
        raise ShimError(msg)


class LeanHost:
    """Sets up one pystorm component on the runtime's collector and drives it."""

    def __init__(self, cls: type, config: dict, context: Any, collector: Any,
                 is_spout: bool, probe: Probe | None = None, state: dict | None = None) -> None:
        self.config = config
        self.context = context
        self.collector = collector
        self.is_spout = is_spout
        self.topology = context.topology_name
        self.component = context.component_id
        self.task = context.task_id
        self.loc = where(self.topology, self.component, self.task)
        self.stopping = False
        self.active = False
        self.probe = probe
        peer = self.peer = StormPeer(self, pystorm=True)
        comp = self.comp = cls(input_stream=io.BytesIO(), output_stream=io.BytesIO(),
                               serializer="json")
        wire = comp.serializer = _Wire(peer, probe)
        # Instance attributes win over the class's methods: the component's own calls
        # (and its base classes' super() chains, which end in these) take the short path.
        comp.send_message = wire.send_message
        comp.read_message = wire.read_message
        comp.log = prefixed_log(comp)  # its lines reach the task log as they come
        comp._exit = self._exit
        pid_dir = os.path.join(os.getcwd(), ".pids")
        os.makedirs(pid_dir, exist_ok=True)
        wire.pending.append(peer.handshake(pid_dir))
        if probe is not None:
            probe.down(wire.pending[0])  # the probe reads who it measures from it
        # pystorm's run() up to its loop: handshake, logging, (state,) initialize.
        storm_conf, storm_context = comp.read_handshake()
        set_up(comp, storm_conf, storm_context, state)
        self._bind()
        comp.initialize(storm_conf, storm_context)
        log.info("%s: %s hosted lean", self.loc, cls.__name__)

    # -- what replaces the messages ------------------------------------------------------

    def _bind(self) -> None:
        comp, cls = self.comp, type(self.comp)
        if self.is_spout:
            if cls.emit is pystorm.spout.Spout.emit:
                comp.emit = self._spout_emit()
            return
        self._types: dict[type, tuple] = {}
        self._ids = count(1)
        self.current: Any = None
        comp.read_tuple = self._read_tuple
        if cls.emit in (pystorm.bolt.Bolt.emit, pystorm.bolt.BatchingBolt.emit):
            comp.emit = self._bolt_emit(cls.emit is pystorm.bolt.BatchingBolt.emit)
        if cls.ack is pystorm.bolt.Bolt.ack:
            comp.ack = self._settle(self.collector.ack, "acked")
        if cls.fail is pystorm.bolt.Bolt.fail:
            comp.fail = self._settle(self.collector.fail, "failed")

    def _read_tuple(self) -> StormTuple:
        """pystorm's read_tuple, from the runtime's tuple being executed."""
        rt = self.current
        kind = self._types.get(rt.__class__)
        if kind is None:
            kind = self._kind(rt)
        tid = TupleId(next(self._ids))
        tid.tup = rt
        values_type, component, stream, task = kind
        values = rt.values
        return _new_tuple(StormTuple, (tid, component, stream, task,
                                       tuple(values) if values_type is None
                                       else _new_tuple(values_type, values)))

    def _kind(self, rt: Any) -> tuple:
        """What every tuple of one runtime tuple class shares (pystorm's namedtuple type
        for its source stream, from the handshake's source->stream->fields)."""
        values_type = self.comp._source_tuple_types[rt.component].get(rt.stream)
        kind = self._types[rt.__class__] = (values_type, rt.component, rt.stream, rt.task)
        return kind

    def _held(self, tup: Any, what: str) -> Any:
        tid = tup.id if isinstance(tup, StormTuple) else tup
        rt = getattr(tid, "tup", None)
        if rt is None:
            msg = (f"{self.loc}: {what} tuple id {tid!r}, which is not a tuple this task "
                   "holds (never received, or already acked or failed)")
            raise ShimError(msg)
        return rt

    def _settle(self, call: Callable[[Any], None], what: str) -> Callable[[Any], None]:
        held = self._held

        def settle(tup: Any) -> None:
            tid = tup[0] if tup.__class__ is StormTuple else tup
            try:
                rt = tid.tup
            except AttributeError:
                rt = None
            if rt is None:
                rt = held(tup, what)
            tid.tup = None  # a second ack or fail is the component's error, as on Storm
            call(rt)

        return settle

    def _anchors(self, anchors: Any) -> list:
        held = self._held
        return [held(a, "emit anchored onto") for a in anchors]

    def _emit(self) -> Callable[..., Any]:
        """The collector's emit, taking values as Storm's multilang carries them (the
        json serializer does that itself: no cost per emit then)."""
        emit = self.collector.emit
        if not self.peer.as_multilang:
            return emit
        return lambda values, *args: emit(multilang_values(values), *args)

    def _bolt_emit(self, no_task_ids: bool) -> Callable[..., Any]:
        comp, emit, anchored, probe = self.comp, self._emit(), self._anchors, self.probe

        def bolt_emit(tup: Any, stream: str | None = None, anchors: Any = None,
                      direct_task: int | None = None, need_task_ids: bool = False) -> Any:
            cls = tup.__class__
            if cls is not list and cls is not tuple:
                tup = _sequence(tup)
            if anchors is None:
                current = comp._current_tups if comp.auto_anchor else ()
                if len(current) == 1:
                    try:
                        rt = current[0][0].tup
                    except AttributeError:
                        rt = None
                    anchors = rt if rt is not None else anchored(current)
                else:
                    anchors = anchored(current) if current else None
            else:
                anchors = anchored(anchors)
            tasks = emit(tup, stream or "default", anchors, direct_task)
            if probe is not None:
                probe.emitted(None)
            if need_task_ids and not no_task_ids:
                return [direct_task] if direct_task is not None else list(tasks)
            return None

        return bolt_emit

    def _spout_emit(self) -> Callable[..., Any]:
        emit, probe = self._emit(), self.probe

        def spout_emit(tup: Any, tup_id: Any = None, stream: str | None = None,
                       direct_task: int | None = None, need_task_ids: bool = False) -> Any:
            cls = tup.__class__
            if cls is not list and cls is not tuple:
                tup = _sequence(tup)
            tasks = emit(tup, tup_id, stream or "default", direct_task)
            if probe is not None:
                probe.emitted(tup_id)
            if need_task_ids:
                return [direct_task] if direct_task is not None else list(tasks)
            return None

        return spout_emit

    # -- pystorm's run() loop, one call at a time ----------------------------------------

    def execute(self, rt: Any) -> None:
        self.current = rt
        try:
            self.comp._run()
        except Exception as exc:  # noqa: BLE001 - pystorm's own handling, as in its run()
            self._failed(exc)

    def call(self, method: Callable[..., None], *args: Any) -> None:
        """A spout method, with pystorm's handling of what it raises."""
        try:
            method(*args)
        except Exception as exc:  # noqa: BLE001
            self._failed(exc)

    def _failed(self, exc: Exception) -> None:
        """What pystorm's run() does when `_run` raises: log it, let the class report it
        (and auto-fail), then exit unless `exit_on_exception` is off."""
        comp = self.comp
        log_msg = f"Exception in {comp.__class__.__name__}.run()"
        exc_info = sys.exc_info()
        try:
            comp.logger.error(log_msg, exc_info=True)
            comp._handle_run_exception(exc)
        except Exception:  # noqa: BLE001 - pystorm logs these two and goes on
            pystorm.component.log.error(log_msg, exc_info=exc_info)
            pystorm.component.log.error("While trying to handle previous exception...",
                                        exc_info=sys.exc_info())
        if comp.exit_on_exception:
            self._exit(1)

    def _exit(self, code: int) -> None:
        """pystorm's exits: the task's loop sends what was emitted, then leaves."""
        raise SystemExit(0 if code == STORM_WENT_AWAY and self.stopping else code)


class LeanSpout:
    """The runtime Spout face of a LeanHost."""

    def __init__(self, host: LeanHost) -> None:
        self.host = host
        comp, call, probe = host.comp, host.call, host.probe
        self.activate = lambda: self._state(True)
        self.deactivate = lambda: self._state(False)
        next_tuple = comp.next_tuple
        if probe is None:
            def step() -> None:
                try:
                    next_tuple()
                except Exception as exc:  # noqa: BLE001
                    host._failed(exc)
        else:
            allowed = probe.next_allowed

            def step() -> None:
                if allowed():
                    call(next_tuple)
        self.next_tuple = step
        lag = getattr(comp, "source_lag", None)
        if callable(lag):  # the runtime's Spout.source_lag, on a pystorm spout too
            self.source_lag = lag
        if probe is None:
            self.ack = lambda msg_id: call(comp.ack, msg_id)
            self.fail = lambda msg_id: call(comp.fail, msg_id)
        else:
            self.ack = lambda msg_id: (probe.acked(msg_id), call(comp.ack, msg_id))
            self.fail = lambda msg_id: (probe.failed(msg_id), call(comp.fail, msg_id))

    def _state(self, running: bool) -> None:
        host = self.host
        if running != host.active:
            host.active = running
            host.call(host.comp.activate if running else host.comp.deactivate)

    def close(self) -> None:
        self.host.stopping = True
        self._state(False)  # Storm deactivates a spout when its topology is killed
        if self.host.probe is not None:
            self.host.probe.close()


def _sequence(values: Any) -> list:
    if not isinstance(values, (list, tuple)):
        msg = f"All Tuples must be either lists or tuples, received {type(values)!r} instead."
        raise TypeError(msg)
    return list(values)


def wake_face(host: LeanHost) -> Callable[[], float | None] | None:
    """The runtime Bolt's wake for a LeanHost whose component has one (heronbridge's
    call: Storm never makes it), with pystorm's handling of what it raises."""
    wake = getattr(host.comp, "wake", None)
    if not callable(wake):
        return None

    def call() -> float | None:
        try:
            return wake()
        except Exception as exc:  # noqa: BLE001 - as pystorm's run() handles it
            host._failed(exc)
            return None

    return call


def bolt_face(host: LeanHost) -> tuple[Callable[[Any], None], Callable[[], None]]:
    """The runtime Bolt's execute and cleanup for a LeanHost."""
    probe = host.probe
    if probe is None:
        return host.execute, lambda: None

    tuple_in = probe.tuple_in

    def execute(rt: Any) -> None:
        tuple_in(rt.component, rt.stream)
        host.execute(rt)

    return execute, probe.close
