"""Storm's side of the multilang protocol, for one task, on top of the runtime.

Turns the runtime's tuples and spout commands into the messages Storm sends a
multilang component, and carries out what the component sends back (emit, ack, fail,
log, error, metrics, sync) with the runtime's collector. The in-process and subprocess
hosts differ only in how the messages travel.
"""

from __future__ import annotations

import itertools
import logging
from collections import deque
from typing import Any

from heronbridge.runtime.api.tuple import Tuple
from heronbridge.runtime.errors import where

from . import ShimError
from .handshake import handshake
from .logs import pystorm_lines

# Storm's multilang log levels (STORM-414) as Python's.
LOG_LEVELS = {0: logging.DEBUG, 1: logging.DEBUG, 2: logging.INFO, 3: logging.WARNING,
              4: logging.ERROR}


class StormPeer:
    """`pystorm`: the component is pystorm's, whose log messages come formatted."""

    def __init__(self, host: Any, pystorm: bool = False) -> None:
        self.host = host
        self.collector = host.collector
        self.is_spout = host.is_spout
        self.loc = where(host.topology, host.component, host.task)
        self.tuples: dict[str, Tuple] = {}  # multilang id -> the runtime's input tuple
        self._ids = itertools.count(1)
        self.replies: deque[list[int]] = deque()  # task id lists the component will read
        self.metrics: dict[str, Any] = {}
        self.pid: int | None = None
        self.synced = True
        self.log = logging.getLogger(f"heronbridge.storm.{host.component}")
        self.lines = pystorm_lines(host.component) if pystorm else self.log

    # -- to the component ---------------------------------------------------------

    def handshake(self, pid_dir: str) -> dict[str, Any]:
        return handshake(self.host.context, pid_dir, self.is_spout)

    def tuple_message(self, tup: Tuple) -> dict[str, Any]:
        """A bolt's input tuple, remembered under a fresh id until acked or failed."""
        tup_id = str(next(self._ids))
        self.tuples[tup_id] = tup
        return {"id": tup_id, "comp": tup.component, "stream": tup.stream, "task": tup.task,
                "tuple": tup.values}

    def command_message(self, command: str, msg_id: Any = None) -> dict[str, Any]:
        """A spout command: next, ack, fail, activate or deactivate."""
        self.synced = False
        return {"command": command, "id": "" if msg_id is None else msg_id}

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
        if self.is_spout:
            tasks = self.collector.emit(values, msg_id=msg.get("id"), stream=stream,
                                        direct_task=task)
        else:
            anchors = msg.get("anchors") or []
            if isinstance(anchors, str):  # Storm accepts one id as well as a list
                anchors = [anchors]
            try:
                anchored = [self.tuples[a] for a in anchors]
            except KeyError as exc:
                msg_text = (f"{self.loc}: emit anchored onto tuple id {exc.args[0]!r}, "
                            "which was already acked or failed (or never received)")
                raise ShimError(msg_text) from None
            tasks = self.collector.emit(values, stream=stream, anchors=anchored,
                                        direct_task=task)
        if task is None and msg.get("need_task_ids", True):
            self.replies.append(list(tasks))

    def _ack(self, msg: dict) -> None:
        self.collector.ack(self._pop(msg, "acked"))

    def _fail(self, msg: dict) -> None:
        self.collector.fail(self._pop(msg, "failed"))

    def _pop(self, msg: dict, what: str) -> Tuple:
        tup_id = msg.get("id")
        tup = self.tuples.pop(tup_id, None)
        if tup is None:
            text = (f"{self.loc}: {what} tuple id {tup_id!r}, which is not a tuple this task "
                    "holds (never received, or already acked or failed)")
            raise ShimError(text)
        return tup

    def _log(self, msg: dict) -> None:
        self.lines.log(LOG_LEVELS.get(msg.get("level", 2), logging.INFO), "%s", msg.get("msg"))

    def _error(self, msg: dict) -> None:
        self.collector.report_error(ShimError(str(msg.get("msg"))))

    def _metrics(self, msg: dict) -> None:
        self.metrics[str(msg.get("name"))] = msg.get("params")

    def _sync(self, msg: dict) -> None:
        self.synced = True

    def _refuse(self, expected: str) -> None:
        text = f"{self.loc}: the component sent a message the multilang protocol does not " \
               f"allow; expected {expected}"
        raise ShimError(text)


_HANDLERS = {"emit": StormPeer._emit, "ack": StormPeer._ack, "fail": StormPeer._fail,
             "log": StormPeer._log, "error": StormPeer._error, "metrics": StormPeer._metrics,
             "sync": StormPeer._sync}
