"""Noting what each task does: its collector's emits, acks and fails, its spout's
callbacks, and the log records made while the harness calls it.

The collector is wrapped before the component starts (the in-process hosts bind its
methods then); values are noted as the topology's serializer carries them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from heronbridge.runtime.errors import where
from heronbridge.runtime.instance.task import Task

from .errors import TestingError
from .result import ComponentRecord, Result


class Recorder(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.components: dict[str, ComponentRecord] = {}
        self.current: str | None = None  # the component the harness is calling
        self._last: logging.LogRecord | None = None

    def of(self, component: str) -> ComponentRecord:
        found = self.components.get(component)
        if found is None:
            found = self.components[component] = ComponentRecord()
        return found

    # -- logs -----------------------------------------------------------------------

    def emit(self, record: logging.LogRecord) -> None:  # logging.Handler's, not a tuple's
        if record is self._last:  # seen on the way up from pystorm's logger to the root
            return
        self._last = record
        if self.current is not None and not record.name.startswith("heronbridge"):
            try:
                self.of(self.current).logs.append(record.getMessage())
            except Exception:  # noqa: BLE001 - a record that cannot format stays out
                self.handleError(record)

    @contextmanager
    def calling(self, component: str) -> Iterator[None]:
        """Log records made meanwhile are `component`'s."""
        before, self.current = self.current, component
        try:
            yield
        finally:
            self.current = before

    @contextmanager
    def running(self, task: Task, doing: str) -> Iterator[None]:
        """Calling `task`'s component: its log records are its own, and what it raises (or
        a pystorm exit) is the test's error, naming the task and what it was doing."""
        try:
            with self.calling(task.component):
                yield
        except TestingError:
            raise
        except (Exception, SystemExit) as exc:
            logs = self.of(task.component).logs[-5:]
            said = "; its last log lines: " + " | ".join(logs) if logs else ""
            msg = (f"{where(task.topology, task.component, task.task)}: failed while "
                   f"{doing}: {type(exc).__name__}: {exc}{said}")
            raise TestingError(msg) from exc

    @contextmanager
    def listening(self) -> Iterator[None]:
        """Hear log records from the root logger and from pystorm's (whose components'
        loggers are under it): the in-process host moves the root's handlers aside
        when a component starts (`reattach` puts this one back)."""
        self.reattach()
        logging.getLogger("pystorm").addHandler(self)
        try:
            yield
        finally:
            for name in ("", "pystorm", "heronbridge"):
                logging.getLogger(name).removeHandler(self)

    def reattach(self) -> None:
        root = logging.getLogger()
        logging.getLogger("heronbridge").removeHandler(self)
        if self not in root.handlers:
            root.addHandler(self)

    # -- collectors -----------------------------------------------------------------

    def watch(self, task: Task) -> None:
        """Wrap a task's collector (after attach, before the component starts)."""
        em = task.emitter
        assert em is not None
        record = self.of(task.component)
        carried = _carrier(task)
        emit = em.emit

        if task.is_spout:
            def spout_emit(values: Any, msg_id: Any = None, stream: str = "default",
                           direct_task: int | None = None) -> Any:
                tasks = emit(values, msg_id, stream, direct_task)
                record.emitted.setdefault(stream, []).append(carried(values))
                return tasks

            em.emit = spout_emit  # type: ignore[method-assign]
            return

        def bolt_emit(values: Any, stream: str = "default", anchors: Any = None,
                      direct_task: int | None = None) -> Any:
            tasks = emit(values, stream, anchors, direct_task)
            record.emitted.setdefault(stream, []).append(carried(values))
            record.anchors.setdefault(stream, []).append(_anchor_values(anchors))
            return tasks

        em.emit = bolt_emit  # type: ignore[method-assign]
        for name, noted in (("ack", record.acked), ("fail", record.failed)):
            setattr(em, name, _settled(getattr(em, name), noted))

    def watch_spout(self, task: Task) -> None:
        """Wrap a spout's ack and fail (after it opened: the hosts set them then)."""
        record = self.of(task.component)
        user = task.user
        for name, noted in (("ack", record.acked), ("fail", record.failed)):
            call = getattr(user, name)
            setattr(user, name, _called(call, noted, record, self, task.component))

    def result(self, topology: str, components: list[str], seconds: float) -> Result:
        for name in components:
            self.of(name)
        return Result(topology, {name: self.components[name] for name in sorted(components)},
                      seconds=seconds)


def _carrier(task: Task) -> Callable[[Any], list[Any]]:
    """Values as the task's serializer carries them to the next component."""
    serializer = task.attachment.serializer

    def carried(values: Any) -> list[Any]:
        try:
            return list(serializer.decode(serializer.encode([(list(values),)]))[0][0])
        except Exception:  # noqa: BLE001 - the emit itself reports what cannot be encoded
            return list(values)

    return carried


def _anchor_values(anchors: Any) -> list[list[Any]]:
    if anchors is None:
        return []
    many = anchors if isinstance(anchors, (list, tuple)) else [anchors]
    return [list(a.values) for a in many if not getattr(a, "is_tick", False)]


def _settled(call: Callable[[Any], None], noted: list[Any]) -> Callable[[Any], None]:
    def settle(tup: Any) -> None:
        if not getattr(tup, "is_tick", False):
            noted.append(list(getattr(tup, "values", [tup])))
        call(tup)

    return settle


def _called(call: Callable[[Any], None], noted: list[Any], record: ComponentRecord,
            recorder: Recorder, component: str) -> Callable[[Any], None]:
    def callback(msg_id: Any) -> None:
        noted.append(msg_id)
        with recorder.calling(component):
            call(msg_id)

    return callback
