"""heronpy spouts and bolts as runtime components, through heronpy's delegate interface.

Heron's instance builds the user's class with `delegate=instance` and serves what
heronpy's base classes call on it: `logger`, `emit`, `ack`, `fail` and `log`. Here the
runtime component is that delegate. It calls `initialize(config=..., context=...)`
with keywords (the merged config, auto-typed; a heronpy TopologyContext), hands bolts
HeronTuples, and maps their acks, fails and anchors back to the runtime's tuples.

The per-tuple path is bound once, after `initialize`: with no message hook and no task
hook, `execute` builds the HeronTuple and calls `process` directly, `next_tuple`, `ack`
and `fail` are the spout's own methods, and where a component does not override
heronpy's `emit`/`ack`/`fail` (which only forward to the delegate) the forwarding
functions replace them on the instance. With hooks, the class's methods below run
instead: they drive the message hook (traced.py) and the task hooks.
"""

from __future__ import annotations

import logging
import os
import sys
import time
import traceback
from typing import Any

from heronpy.api.bolt.base_bolt import BaseBolt
from heronpy.api.spout.base_spout import BaseSpout

from heronbridge.runtime import config as rt
from heronbridge.runtime.api import SYSTEM_COMPONENT, TICK_STREAM, Bolt, Spout, tuple_class
from heronbridge.runtime.errors import where
from heronbridge.runtime.plan.logical import resolve_import_path

from ..common import logs
from . import HeronpyError, keys, windows
from .config import auto_type, component_view
from .context import HeronpyContext
from .keys import HERON_OPTIONS
from .traced import Tracer, message_hook
from .tuples import HeronTuple, TickTuple, tick

# heronpy's log levels (`log(message, level)`) as Python's, and as Storm's multilang's.
LEVELS = {"trace": logging.DEBUG, "debug": logging.DEBUG, "info": logging.INFO,
          "warn": logging.WARNING, "warning": logging.WARNING, "error": logging.ERROR}
STORM_LEVELS = {"trace": 0, "debug": 1, "info": 2, "warn": 3, "warning": 3, "error": 4}
_TICK = tuple_class(SYSTEM_COMPONENT, TICK_STREAM, -1)  # the class of the runtime's ticks


class _Delegate:
    """What a heronpy component's base class calls on its delegate; shared set-up."""

    is_spout = False
    window: Any = None  # a window bolt's driver (windows.py)

    def _start(self, config: dict, context: Any, collector: Any) -> None:
        self.collector = collector
        self.loc = where(context.topology_name, context.component_id, context.task_id)
        self.logger = logging.getLogger(f"heronbridge.heronpy.{context.component_id}")
        self.acking = config.get(rt.RELIABILITY_MODE) == rt.ATLEAST_ONCE
        resources = config.get(keys.RESOURCES)
        if resources:  # a project's components run in its src/ copy, as Storm ran them
            os.chdir(resources)
            if resources not in sys.path:
                sys.path.insert(0, resources)
        self._log_to_file(config, context)
        # A module that also defines the Topology class runs heronpy's metaclass when the
        # task imports it, which needs HERON_OPTIONS (`heron submit` sets it).
        os.environ.setdefault(HERON_OPTIONS,
                              f"cmdline.topologydefn.tmpdirectory={os.getcwd()}".replace(
                                  " ", "%%%%"))
        class_path = config.get(keys.CLASS) or ""
        try:
            cls = resolve_import_path(class_path)
        except Exception as exc:
            msg = (f"{self.loc}: cannot load the heronpy class {class_path!r}: "
                   f"{type(exc).__name__}: {exc}")
            raise HeronpyError(msg) from exc
        base = BaseSpout if self.is_spout else BaseBolt
        if not (isinstance(cls, type) and issubclass(cls, base)):
            msg = (f"{self.loc}: expected a heronpy {'Spout' if self.is_spout else 'Bolt'} "
                   f"subclass, received {class_path!r} ({cls!r})")
            raise HeronpyError(msg)
        self.heron_context = HeronpyContext(context, component_view(config), self.loc)
        hook = message_hook(config, self.loc)
        self.tracer = None if hook is None else Tracer(hook, config, context, collector,
                                                       self.is_spout)
        self.user = cls(delegate=self)
        self._init_user_state()
        self.user.initialize(config=self.heron_context.get_cluster_config(),
                             context=self.heron_context)
        self._initialized(config)
        self.heron_context.invoke_hook_prepare()
        self.hooked = self.tracer is not None or bool(self.heron_context.task_hooks)
        if not self.hooked:
            self._bind_fast()

    def _init_user_state(self) -> None:
        """What precedes the component's `initialize` (its state, under EFFECTIVELY_ONCE:
        state.py)."""

    def _initialized(self, config: dict) -> None:
        """What follows the component's `initialize` (bolts: ticks and windows)."""

    def _log_to_file(self, config: dict, context: Any) -> None:
        """The component's logger (`self.logger`, `log()`) at the configured level and,
        where a log path is configured, to its own file there, as pystorm's components
        log (a folder that cannot be used gives way to the task's log folder)."""
        self.logger.setLevel(logs.level(config))
        folder = logs.log_folder(config, os.getcwd(), self.loc)
        if folder is None:
            return
        self.logger.addHandler(logs.file_handler(config, folder, context.topology_name,
                                                 context.component_id, context.task_id))
        self.logger.propagate = False

    def _bind_fast(self) -> None:
        raise NotImplementedError

    def _shortcut(self, base: type, name: str, function: Any) -> None:
        """Let the component call `function` directly where it keeps heronpy's own
        forwarding method (which would only call the delegate's)."""
        setattr(self, name, function)
        if getattr(type(self.user), name) is getattr(base, name):
            setattr(self.user, name, function)

    def log(self, message: Any, level: str | None = None) -> None:
        if self.tracer is not None:
            self.tracer.up({"command": "log", "msg": str(message),
                            "level": STORM_LEVELS.get(level or "info", 2)})
        else:
            self.logger.log(LEVELS.get(level or "info", logging.INFO), "%s", message)

    def _reporting(self, call: Any, *args: Any) -> None:
        """Run a component method; if it raises, report the error as pystorm does (the
        task then dies, as Heron's does, and its tuples time out)."""
        try:
            call(*args)
        except Exception:
            if self.tracer is not None:
                self.tracer.up({"command": "error", "msg": traceback.format_exc()})
            raise


# -- spouts -----------------------------------------------------------------------------


class HeronpySpout(_Delegate, Spout):
    """The runtime spout hosting one heronpy Spout class (config key heronbridge.heronpy.class)."""

    is_spout = True

    def open(self, config: dict, context: Any, collector: Any) -> None:
        self._emitted_at: dict[Any, float] = {}  # task hooks' latencies, by message id
        self._active = False
        self._start(config, context, collector)

    def _bind_fast(self) -> None:
        user, emit_rt = self.user, self.collector.emit
        self.next_tuple = user.next_tuple
        self.ack = user.ack
        self.fail = user.fail

        def emit(tup: Any, tup_id: Any = None, stream: str = "default",
                 direct_task: int | None = None, need_task_ids: bool = False) -> Any:
            tasks = emit_rt(tup, tup_id, stream, direct_task)
            if need_task_ids:
                return list(tasks)
            return None

        self._shortcut(BaseSpout, "emit", emit)

    # The runtime's calls, when hooks are on (else the spout's own methods replace them).

    def next_tuple(self) -> None:
        self._command("next")

    def ack(self, msg_id: Any) -> None:
        self._command("ack", msg_id)

    def fail(self, msg_id: Any) -> None:
        self._command("fail", msg_id)

    def activate(self) -> None:
        self._switch("activate")

    def deactivate(self) -> None:
        self._switch("deactivate")

    def _switch(self, command: str) -> None:
        self._active = command == "activate"
        if self.hooked:
            self._command(command)
        else:
            getattr(self.user, command)()

    def close(self) -> None:
        # A topology being killed deactivates its spouts first, as Storm does (and the
        # Storm shim): migrated code, and traces compared with Storm's, expect it.
        if self._active:
            self.deactivate()
        self.heron_context.invoke_hook_cleanup()
        self.user.close()

    def _command(self, command: str, msg_id: Any = None) -> None:
        if self.tracer is None:
            self._run(command, msg_id)
            return
        for msg in self.tracer.down(self.tracer.peer.command_message(command, msg_id)):
            self._run(msg.get("command"), msg.get("id"))
        self.tracer.up({"command": "sync"})

    def _run(self, command: str, msg_id: Any) -> None:
        user, context = self.user, self.heron_context
        if command == "next":
            self._reporting(user.next_tuple)
        elif command == "ack":
            self._reporting(user.ack, msg_id)
            if context.task_hooks:
                context.invoke_hook_spout_ack(msg_id, self._emitted_at.pop(msg_id, None))
        elif command == "fail":
            self._reporting(user.fail, msg_id)
            if context.task_hooks:
                context.invoke_hook_spout_fail(msg_id, self._emitted_at.pop(msg_id, None))
        elif command == "activate":
            user.activate()
        elif command == "deactivate":
            user.deactivate()

    # The delegate's emit, when hooks are on.

    def emit(self, tup: Any, tup_id: Any = None, stream: str = "default",
             direct_task: int | None = None, need_task_ids: bool = False) -> Any:
        if self.tracer is not None:
            fields = {} if tup_id is None else {"id": tup_id}
            tasks = self.tracer.emit(tup, stream, direct_task, need_task_ids, **fields)
        else:
            tasks = list(self.collector.emit(tup, tup_id, stream, direct_task))
        context = self.heron_context
        if context.task_hooks:
            if tup_id is not None:
                self._emitted_at[tup_id] = time.monotonic()
            context.invoke_hook_emit(tup, stream, tasks)
        return list(tasks) if need_task_ids and tasks is not None else None


# -- bolts ------------------------------------------------------------------------------


class HeronpyBolt(_Delegate, Bolt):
    """The runtime bolt hosting one heronpy Bolt class (config key heronbridge.heronpy.class)."""

    def prepare(self, config: dict, context: Any, collector: Any) -> None:
        self._start(config, context, collector)

    def _initialized(self, config: dict) -> None:
        """Heron's instance reads the tick period after `initialize`, where heronpy's
        window bolts set it: the runtime's config gets it, and the runtime reads it after
        `prepare`. A window bolt's windows are then driven here (windows.py)."""
        freq = self.heron_context.get_cluster_config().get(rt.TICK_TUPLE_FREQ_SECS)
        if freq is not None:
            config[rt.TICK_TUPLE_FREQ_SECS] = auto_type(freq) if isinstance(freq, str) else freq
        window = self.window = windows.driver(self.user, self.acking)
        if window is not None:  # instance attributes: heronpy's own methods stay unused
            self.user.process = window.process
            self.user.process_tick = window.process_tick

    def cleanup(self) -> None:
        self.heron_context.invoke_hook_cleanup()

    def _bind_fast(self) -> None:
        user, collector = self.user, self.collector
        process, process_tick = user.process, user.process_tick
        clock, tick_class, heron_tuple = time.time, _TICK, HeronTuple
        ack_rt, fail_rt, emit_rt = collector.ack, collector.fail, collector.emit
        anchored, settle = self._anchored, self._settle

        def execute(rt_tuple: Any) -> None:
            if rt_tuple.__class__ is tick_class:
                process_tick(tick())
                return
            values = rt_tuple.values
            if values.__class__ is not list:  # pickled as emitted: a tuple stays one
                values = list(values)
            process(heron_tuple(rt_tuple, values, clock()))

        def ack(tup: Any) -> None:
            if tup.__class__ is heron_tuple:
                ack_rt(tup.roots)
            else:
                settle("ack", tup)  # a tick (nothing to do), or an error

        def fail(tup: Any) -> None:
            if tup.__class__ is heron_tuple:
                fail_rt(tup.roots)
            else:
                settle("fail", tup)

        if self.acking:
            def emit(tup: Any, stream: str = "default", anchors: Any = None,
                     direct_task: int | None = None, need_task_ids: bool = False) -> Any:
                if anchors is not None:
                    if anchors.__class__ is list and len(anchors) == 1 \
                            and anchors[0].__class__ is heron_tuple:
                        anchors = anchors[0].roots
                    else:
                        anchors = anchored(anchors)
                tasks = emit_rt(tup, stream, anchors, direct_task)
                if need_task_ids:
                    return list(tasks)
                return None
        else:  # nothing is tracked: anchors change nothing
            def emit(tup: Any, stream: str = "default", anchors: Any = None,
                     direct_task: int | None = None, need_task_ids: bool = False) -> Any:
                tasks = emit_rt(tup, stream, None, direct_task)
                if need_task_ids:
                    return list(tasks)
                return None

        self.execute = execute
        self._shortcut(BaseBolt, "emit", emit)
        self._shortcut(BaseBolt, "ack", ack)
        self._shortcut(BaseBolt, "fail", fail)

    def _not_a_tuple(self, what: str, tup: Any) -> HeronpyError:
        msg = (f"{self.loc}: {what} expects a tuple the bolt received (a HeronTuple), "
               f"received {type(tup).__name__} {tup!r}")
        return HeronpyError(msg)

    def _anchor_list(self, anchors: Any) -> list[Any]:
        """heronpy's anchors: a list of HeronTuples (one alone is accepted too)."""
        if anchors is None:
            return []
        if isinstance(anchors, HeronTuple):
            anchors = [anchors]
        if not isinstance(anchors, (list, tuple)) or any(
                not isinstance(a, HeronTuple) for a in anchors):
            msg = (f"{self.loc}: emit expects anchors to be a list of tuples the bolt "
                   f"received (HeronTuples), received {anchors!r}")
            raise HeronpyError(msg)
        return [a for a in anchors if a.__class__ is HeronTuple]  # ticks anchor nothing

    def _anchored(self, anchors: Any) -> list[Any]:
        return [a.roots for a in self._anchor_list(anchors)]

    # The runtime's call and the delegate's methods, when hooks are on.

    def execute(self, rt_tuple: Any) -> None:
        if self.tracer is None:
            tuples = [tick() if rt_tuple.__class__ is _TICK else
                      HeronTuple(rt_tuple, list(rt_tuple.values), time.time())]
        else:
            msg = self.tracer.peer.tuple_message(rt_tuple)
            tuples = [self._from_message(m) for m in self.tracer.down(msg)]
            if rt_tuple.__class__ is _TICK:
                self.tracer.forget(msg["id"])
        user, context = self.user, self.heron_context
        for tup in tuples:
            started = time.monotonic()
            if tup.__class__ is TickTuple:
                self._reporting(user.process_tick, tup)
                continue
            self._reporting(user.process, tup)
            if context.task_hooks:
                context.invoke_hook_bolt_execute(tup, started)

    def _from_message(self, msg: dict[str, Any]) -> Any:
        if msg.get("stream") == TICK_STREAM and msg.get("comp") == SYSTEM_COMPONENT:
            return tick()
        tup_id = msg["id"]
        return HeronTuple(self.tracer.peer.tuples.get(tup_id), msg["tuple"], time.time(),
                          str(tup_id))

    def emit(self, tup: Any, stream: str = "default", anchors: Any = None,
             direct_task: int | None = None, need_task_ids: bool = False) -> Any:
        anchor_list = self._anchor_list(anchors)
        if self.tracer is not None:
            tasks = self.tracer.emit(tup, stream, direct_task, need_task_ids,
                                     anchors=[a.id for a in anchor_list])
        else:
            tasks = list(self.collector.emit(tup, stream, [a.roots for a in anchor_list],
                                             direct_task))
        if self.heron_context.task_hooks:
            self.heron_context.invoke_hook_emit(tup, stream, tasks)
        return list(tasks) if need_task_ids and tasks is not None else None

    def ack(self, tup: Any) -> None:
        self._settle("ack", tup)

    def fail(self, tup: Any) -> None:
        self._settle("fail", tup)

    def _settle(self, what: str, tup: Any) -> None:
        if tup.__class__ is not HeronTuple:
            if isinstance(tup, TickTuple):  # heronpy never acks ticks: nothing to do
                return
            raise self._not_a_tuple(what, tup)
        if self.tracer is not None:
            self.tracer.up({"command": what, "id": tup.id})
        else:
            (self.collector.ack if what == "ack" else self.collector.fail)(tup.roots)
        context = self.heron_context
        if context.task_hooks:
            (context.invoke_hook_bolt_ack if what == "ack" else context.invoke_hook_bolt_fail)(
                tup)
