"""The tracing hook at the runtime's component interface, for effectively-once runs.

Under EFFECTIVELY_ONCE the runtime rebuilds every component at a rollback between two
calls of the task's loops, so it refuses a component that keeps its own loop, as a
pystorm component behind a message hook does. There `TracedComponent` stands in for the
component the plan names (`ORIGINAL` in its config): the component runs lean, and the
calls between it and the runtime are handed to the same `TraceHook` as the multilang
messages they stand for. The records, faults, bound and seeding are therefore the
hook's own, in the same trace files.

One hook serves a task's process for its whole life: a rollback builds a new component
but the trace file goes on (a new hook would open the same file anew). With acking off
in this mode the runtime acks a spout's msg id as it is emitted, which the hook records.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from itertools import count
from typing import Any

from heronbridge.runtime.plan.logical import resolve_import_path
from heronbridge.shims.common.handshake import handshake

from .hook import TraceHook

ORIGINAL = "heronbridge.conformance.trace.component"  # the class path it stands in for
PATH = "heronbridge.conformance.trace.component_hook:TracedComponent"

# (component, task) -> this process's hook, and the input tuple ids it has given out
# (ids name tuples in the trace file, which outlives the components of a rollback)
_HOOKS: dict[tuple[str, int], tuple[TraceHook, Iterator[int]]] = {}


def stand_in(spec: Any) -> None:
    """Make a plan's component spec run under `TracedComponent`."""
    spec.config[ORIGINAL] = spec.class_path
    spec.class_path = PATH


class TracedComponent:
    """A runtime Spout or Bolt (the plan's kind says which) that runs the original one
    and tells the hook what passes between it and the runtime."""

    owns_loop = False
    config: dict
    context: Any
    collector: Any

    def __init__(self) -> None:
        self._inner: Any = None

    # -- the runtime's stateful contract ------------------------------------------------

    def init_state(self, state: dict) -> None:
        inner = self._component()
        if hasattr(inner, "init_state"):
            inner.init_state(state)

    def pre_save(self, checkpoint_id: str) -> None:
        pre_save = getattr(self._component(), "pre_save", None)
        if pre_save is not None:
            pre_save(checkpoint_id)

    # -- spout ----------------------------------------------------------------------------

    def open(self, config: dict, context: Any, collector: Any) -> None:
        self._hook, _ = self._started(True)
        self._collector = _SpoutCollector(collector, self._hook)
        self._component().open(config, context, self._collector)

    def next_tuple(self) -> None:
        mine, _ = self._hook.down({"command": "next"})
        if mine:
            self._inner.next_tuple()
            self._hook.up({"command": "sync"})

    def ack(self, msg_id: Any) -> None:
        self._hook.down({"command": "ack", "id": msg_id})
        self._inner.ack(msg_id)

    def fail(self, msg_id: Any) -> None:
        self._hook.down({"command": "fail", "id": msg_id})
        self._inner.fail(msg_id)

    def activate(self) -> None:
        self._hook.down({"command": "activate"})
        self._inner.activate()

    def deactivate(self) -> None:
        self._hook.down({"command": "deactivate"})
        self._inner.deactivate()

    def close(self) -> None:
        self._inner.close()
        self._hook.flush()

    # -- bolt -----------------------------------------------------------------------------

    def prepare(self, config: dict, context: Any, collector: Any) -> None:
        self._hook, numbers = self._started(False)
        self._collector = _BoltCollector(collector, self._hook, numbers)
        self._component().prepare(config, context, self._collector)

    def execute(self, tup: Any) -> None:
        ids = self._collector.ids
        tup_id = ids[id(tup)] = (tup, str(next(self._collector.numbers)))
        mine, back = self._hook.down({"id": tup_id[1], "comp": tup.component,
                                      "stream": tup.stream, "task": tup.task,
                                      "tuple": list(tup.values)})
        if mine:
            self._inner.execute(tup)
        else:  # an injected fault: failed (told back) or dropped (nothing back)
            ids.pop(id(tup), None)
            if back:
                self._collector.inner.fail(tup)

    def cleanup(self) -> None:
        self._inner.cleanup()
        self._hook.flush()

    # -- the hook -------------------------------------------------------------------------

    def _component(self) -> Any:
        if self._inner is None:
            inner = self._inner = resolve_import_path(self.config[ORIGINAL])()
            inner.config, inner.context = self.config, self.context
        return self._inner

    def _started(self, is_spout: bool) -> tuple[TraceHook, Iterator[int]]:
        """This task's hook and tuple ids: made at the process's first start, then kept."""
        context = self.context
        key = (context.component_id, context.task_id)
        found = _HOOKS.get(key)
        if found is None:
            hook = TraceHook(self.config)
            found = _HOOKS[key] = (hook, count(1))
            pid_dir = os.path.join(os.getcwd(), ".pids")
            os.makedirs(pid_dir, exist_ok=True)
            hook.down(handshake(context, pid_dir, is_spout))
            hook.up({"pid": os.getpid()})
        return found


class _SpoutCollector:
    def __init__(self, inner: Any, hook: TraceHook) -> None:
        self.inner = inner
        self.hook = hook

    def emit(self, values: list, msg_id: Any = None, stream: str = "default",
             direct_task: int | None = None) -> Any:
        tasks = self.inner.emit(values, msg_id, stream, direct_task)
        hook = self.hook
        hook.up({"command": "emit", "tuple": list(values), "id": msg_id, "stream": stream,
                 "task": direct_task})
        if direct_task is None:
            hook.down(list(tasks))
        return tasks

    def report_error(self, error: BaseException) -> None:
        self.hook.up({"command": "error", "msg": str(error)})
        self.inner.report_error(error)


class _BoltCollector:
    def __init__(self, inner: Any, hook: TraceHook, numbers: Iterator[int]) -> None:
        self.inner = inner
        self.hook = hook
        self.ids: dict[int, tuple[Any, str]] = {}  # id() of an input tuple -> (it, its id)
        self.numbers = numbers

    def _id(self, tup: Any) -> str:
        held = self.ids.get(id(tup))
        return held[1] if held is not None and held[0] is tup else "?"

    def emit(self, values: list, stream: str = "default", anchors: Any = None,
             direct_task: int | None = None) -> Any:
        tasks = self.inner.emit(values, stream, anchors, direct_task)
        if anchors is None:
            anchors = []
        elif not isinstance(anchors, (list, tuple)):
            anchors = [anchors]
        hook = self.hook
        hook.up({"command": "emit", "tuple": list(values), "stream": stream,
                 "anchors": [self._id(a) for a in anchors], "task": direct_task})
        if direct_task is None:
            hook.down(list(tasks))
        return tasks

    def ack(self, tup: Any) -> None:
        self.hook.up({"command": "ack", "id": self._settled(tup)})
        self.inner.ack(tup)

    def fail(self, tup: Any) -> None:
        self.hook.up({"command": "fail", "id": self._settled(tup)})
        self.inner.fail(tup)

    def _settled(self, tup: Any) -> str:
        tup_id = self._id(tup)
        self.ids.pop(id(tup), None)
        return tup_id

    def report_error(self, error: BaseException) -> None:
        self.hook.up({"command": "error", "msg": str(error)})
        self.inner.report_error(error)
