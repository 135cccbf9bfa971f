"""Storm's side of the multilang protocol, for one task, on top of the runtime.

Turns the runtime's tuples and spout commands into the messages Storm sends a
multilang component, and carries out what the component sends back (emit, ack, fail,
log, error, metrics, sync) with the runtime's collector. The in-process and subprocess
hosts differ only in how the messages travel.
"""

from __future__ import annotations

import itertools
import logging
import re
import time
from collections import deque
from typing import Any

from heronbridge.runtime.api.tuple import Tuple
from heronbridge.runtime.config import TopologyConfig
from heronbridge.runtime.errors import where

from .. import ShimError
from .handshake import handshake
from .logs import pystorm_lines

# Storm's multilang log levels (STORM-414) as Python's.
LOG_LEVELS = {0: logging.DEBUG, 1: logging.DEBUG, 2: logging.INFO, 3: logging.WARNING,
              4: logging.ERROR}


class ReportedError(ShimError):
    """An error a multilang component reported (Storm's reportError), as it told it:
    `origin` is its exception's type, message and stack trace where the text holds a
    Python traceback (pystorm's and storm.py's do)."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.origin = reported_origin(text)


# pystorm's report: "Python NAME raised[ while processing Tuple ...]\n<traceback>".
_PYSTORM = re.compile(r"Python (\w+) raised")
_LAST_LINE = re.compile(r"^(?:[\w.]+\.)?(\w+)(?::\s(.*))?$")


_SCALARS = frozenset({str, int, float, bool, type(None)})


def multilang_values(values: Any) -> Any:
    """A component's emitted values as Storm's multilang carries them, whatever the
    topology's serializer: bytes, at any depth, as the UTF-8 text they hold (pystorm's
    JSON serializer writes them so; bytes that are not UTF-8 raise, as there). The json
    serializer does this itself; the others' hosts call this on each emit."""
    scalars = _SCALARS
    for value in values:
        if value.__class__ not in scalars:
            return [_as_text(v) for v in values]
    return values


def _as_text(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, (list, tuple)):
        return [_as_text(v) for v in value]
    if isinstance(value, dict):
        return {_as_text(k): _as_text(v) for k, v in value.items()}
    return value


def reported_origin(text: str) -> tuple[str, str, str]:
    """(type name, message, stack trace) of a reported error's text."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines)
                  if line.startswith("Traceback (most recent call last)")), None)
    if start is None:
        return "ReportedError", text.strip(), text
    trace = "\n".join(lines[start:]).rstrip()
    named = _PYSTORM.match(lines[0]) if lines else None
    for i in range(len(lines) - 1, start, -1):
        line = lines[i]
        if line.startswith((" ", "\t")) or not line:
            continue
        found = _LAST_LINE.match(line)
        if found and (named is None or found.group(1) == named.group(1)):
            message = "\n".join([found.group(2) or "", *lines[i + 1:]]).strip()
            return found.group(1), message, trace
    return (named.group(1) if named else "ReportedError"), text.strip(), trace


class StormPeer:
    """`pystorm`: the component is pystorm's, whose log messages come formatted;
    `storm_values`: emitted values take the form Storm's multilang gives them
    (multilang_values), false for a heronpy component traced through this protocol."""

    def __init__(self, host: Any, pystorm: bool = False, storm_values: bool = True) -> None:
        self.host = host
        self.collector = host.collector
        self.is_spout = host.is_spout
        self.loc = where(host.topology, host.component, host.task)
        self.tuples: dict[str, Tuple] = {}  # multilang id -> the runtime's input tuple
        self._ids = itertools.count(1)
        # Input tuples the component holds are released once their trees must have
        # expired (Storm's ShellBolt keeps them forever): ids move to older generations
        # every message timeout, and the third is dropped, so a tuple goes between 2 and 3
        # timeouts after it arrived (its tree, emitted before that, expired within 1.5).
        # With acking and timeouts both on a held tuple stays valid, so none is released.
        conf = TopologyConfig.read(host.config, host.topology, host.component)
        # The json serializer's encoder does it itself, at no cost per emit.
        self.as_multilang = storm_values and conf.serializer != "json"
        self._generation_secs = (conf.message_timeout_secs
                                 if conf.message_timeouts or not conf.acking else None)
        self._older: deque[dict[str, Tuple]] = deque()
        self._next_generation = time.monotonic() + (self._generation_secs or 0)
        self._released_up_to = 0  # every id up to this one is acked, failed or released
        self.released = 0
        self.replies: deque[list[int]] = deque()  # task id lists the component will read
        self.metrics: dict[str, Any] = {}
        self.pid: int | None = None
        self.last_error_at: float | None = None  # when the component last reported one
        self.syncs = 0
        self.commands = 0  # spout commands sent: each is answered by one sync
        self.log = logging.getLogger(f"heronbridge.storm.{host.component}")
        self.lines = pystorm_lines() if pystorm else \
            lambda level, message: self.log.log(level, "%s", message)

    # -- to the component ---------------------------------------------------------

    def handshake(self, pid_dir: str) -> dict[str, Any]:
        return handshake(self.host.context, pid_dir, self.is_spout)

    def tuple_message(self, tup: Tuple) -> dict[str, Any]:
        """A bolt's input tuple, remembered under a fresh id until acked, failed or
        released (see __init__)."""
        tup_id = str(next(self._ids))
        self.tuples[tup_id] = tup
        if self._generation_secs is not None:
            now = time.monotonic()
            if now >= self._next_generation:
                self._age(now)
        return {"id": tup_id, "comp": tup.component, "stream": tup.stream, "task": tup.task,
                "tuple": tup.values}

    def _age(self, now: float) -> None:
        self._older.appendleft(self.tuples)
        self.tuples = {}
        self._next_generation = now + (self._generation_secs or 0)
        if len(self._older) <= 2:
            return
        released = self._older.pop()
        if not released:
            return
        self._released_up_to = int(next(reversed(released)))  # ids only grow
        if not self.released:
            self.log.warning("%s: released %d input tuples the component held past twice "
                             "the message timeout (%gs); their trees had failed, and acks or "
                             "fails of them are ignored", self.loc, len(released),
                             self._generation_secs)
        self.released += len(released)

    def _held(self, tup_id: Any) -> Tuple | None:
        """The tuple a component names, taken out of the generations it may be in."""
        tup = self.tuples.pop(tup_id, None)
        if tup is None:
            for generation in self._older:
                tup = generation.pop(tup_id, None)
                if tup is not None:
                    break
        return tup

    def _was_released(self, tup_id: Any) -> bool:
        try:
            return 0 < int(tup_id) <= self._released_up_to
        except (TypeError, ValueError):
            return False

    def command_message(self, command: str, msg_id: Any = None) -> dict[str, Any]:
        """A spout command: next, ack, fail, activate or deactivate."""
        self.commands += 1
        return {"command": command, "id": "" if msg_id is None else msg_id}

    @property
    def synced(self) -> bool:
        """Every command sent has had its sync: a stopping task sends "deactivate" while
        the child may still owe the sync of a `next`, which must not pass for its answer."""
        return self.syncs >= self.commands

    # -- from the component -------------------------------------------------------

    def receive(self, msg: Any) -> None:
        """Carry out one message the component sent."""
        if not isinstance(msg, dict):
            self._refuse(f"a JSON object, received {msg!r}")
        command = msg.get("command")
        handler = _HANDLERS.get(command)
        if handler is not None:
            handler(self, msg)
        elif command is None and "pid" in msg:
            self.pid = msg["pid"]
        elif self.is_spout:  # Storm's ShellSpout refuses what it does not know ...
            self._refuse(f"a command among {sorted(_HANDLERS)}, received {msg!r}")
        else:  # ... and its ShellBolt ignores it
            self.log.warning("%s: ignoring unknown multilang command %r", self.loc, msg)

    def _emit(self, msg: dict) -> None:
        values = msg.get("tuple")
        stream = msg.get("stream") or "default"
        task = msg.get("task")
        if not isinstance(values, (list, tuple)):
            self._refuse(f"an emit's tuple to be a list, received {values!r}")
        if self.as_multilang:
            values = multilang_values(values)
        if self.is_spout:
            tasks = self.collector.emit(values, msg_id=msg.get("id"), stream=stream,
                                        direct_task=task)
        else:
            anchors = msg.get("anchors") or []
            if isinstance(anchors, str):  # Storm accepts one id as well as a list
                anchors = [anchors]
            anchored = [self._anchor(a) for a in anchors]
            if None in anchored:  # released: its tree is gone, nothing to anchor to
                anchored = [a for a in anchored if a is not None]
            tasks = self.collector.emit(values, stream=stream, anchors=anchored,
                                        direct_task=task)
        if task is None and msg.get("need_task_ids", True):
            self.replies.append(list(tasks))

    def _anchor(self, tup_id: Any) -> Tuple | None:
        tup = self.tuples.get(tup_id)
        if tup is None:
            tup = next((g[tup_id] for g in self._older if tup_id in g), None)
        if tup is None and not self._was_released(tup_id):
            msg_text = (f"{self.loc}: emit anchored onto tuple id {tup_id!r}, which was "
                        "already acked or failed (or never received)")
            raise ShimError(msg_text)
        return tup

    def _ack(self, msg: dict) -> None:
        tup = self._pop(msg, "acked")
        if tup is not None:
            self.collector.ack(tup)

    def _fail(self, msg: dict) -> None:
        tup = self._pop(msg, "failed")
        if tup is not None:
            self.collector.fail(tup)

    def _pop(self, msg: dict, what: str) -> Tuple | None:
        tup_id = msg.get("id")
        tup = self._held(tup_id)
        if tup is None and not self._was_released(tup_id):
            text = (f"{self.loc}: {what} tuple id {tup_id!r}, which is not a tuple this task "
                    "holds (never received, or already acked or failed)")
            raise ShimError(text)
        return tup

    def _log(self, msg: dict) -> None:
        self.lines(LOG_LEVELS.get(msg.get("level", 2), logging.INFO), msg.get("msg"))

    def _error(self, msg: dict) -> None:
        self.last_error_at = time.monotonic()
        self.collector.report_error(ReportedError(str(msg.get("msg"))))

    def forget_held(self) -> int:
        """How many input tuples the component held (handed to it, neither acked nor
        failed), forgotten: it has gone, or is going."""
        held = len(self.tuples) + sum(len(g) for g in self._older)
        self.tuples = {}
        self._older.clear()
        return held

    def _metrics(self, msg: dict) -> None:
        """pystorm's `report_metric(name, value)`: as Storm's CountShellMetric, the value
        is added to a counter (the task's `user/NAME`); a value that is no number is kept
        here only, as before."""
        name, value = str(msg.get("name")), msg.get("params")
        self.metrics[name] = value
        context = getattr(self.host, "context", None)
        if context is not None and isinstance(value, (int, float)) \
                and not isinstance(value, bool):
            context.metrics.count(name, value)

    def _sync(self, msg: dict) -> None:
        self.syncs += 1

    def _refuse(self, expected: str) -> None:
        text = f"{self.loc}: the component sent a message the multilang protocol does not " \
               f"allow; expected {expected}"
        raise ShimError(text)


_HANDLERS = {"emit": StormPeer._emit, "ack": StormPeer._ack, "fail": StormPeer._fail,
             "log": StormPeer._log, "error": StormPeer._error, "metrics": StormPeer._metrics,
             "sync": StormPeer._sync}
