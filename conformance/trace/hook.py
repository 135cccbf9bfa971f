"""The tracing hook: sees every multilang message between Storm's side and one task,
writes what the task did as trace records (see `schema`), and injects faults.

The same class runs on both systems: in-process on the runtime (named by the topology
option `heronbridge.storm.hook`), and inside the multilang proxy (`proxy.py`) wherever a
component is a subprocess, on Storm or on the runtime.
"""

from __future__ import annotations

import atexit
import json
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from .. import ConformanceError
from . import schema

FAULT_COUNTS = {"fail": "every", "drop": "every", "exit": "after"}
HOOK_PATH = "heronbridge.conformance.trace.hook:TraceHook"


def _text(value: Any) -> str:
    """canonical(value), also for values only a Python component could hold (in-process,
    before any serializer): those are traced by their repr rather than lost."""
    try:
        return schema.canonical(value)
    except (TypeError, ValueError):
        return schema.canonical(json.loads(json.dumps(value, default=repr)))


def read_faults(value: Any, where: str) -> list[dict[str, Any]]:
    """The faults option as a list of fault mappings (it may arrive as JSON text)."""
    if value is None or value == "":
        return []
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            msg = f"{where}: expected {schema.FAULTS} to be a JSON list, received {value!r}"
            raise ConformanceError(msg) from exc
    if not isinstance(value, list):
        msg = f"{where}: expected {schema.FAULTS} to be a list of faults, received {value!r}"
        raise ConformanceError(msg)
    return value


def check_faults(faults: list[dict[str, Any]], tasks: dict[str, list[int]],
                 spouts: set[str], where: str) -> None:
    """Refuse a fault that cannot apply: unknown component, a spout, an unknown kind or
    count, a task index past the component's tasks. `tasks`: {component: [task ids]}."""
    for fault in faults:
        if not isinstance(fault, dict) or fault.get("kind") not in FAULT_COUNTS:
            msg = (f"{where}: expected each fault a mapping with kind among "
                   f"{sorted(FAULT_COUNTS)}, received {fault!r}")
            raise ConformanceError(msg)
        component, count = fault.get("component"), FAULT_COUNTS[fault["kind"]]
        known = sorted(c for c in tasks if not c.startswith("__"))
        if component not in known:
            msg = (f"{where}: a {fault['kind']} fault names component {component!r}; "
                   f"expected one of the topology's bolts {known}")
            raise ConformanceError(msg)
        if component in spouts:
            msg = (f"{where}: a {fault['kind']} fault names {component!r}, a spout; faults "
                   "apply to bolts only (their input tuples)")
            raise ConformanceError(msg)
        n = fault.get(count)
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            msg = (f"{where}: expected a {fault['kind']} fault's {count!r} to be a whole "
                   f"number >= 1, received {fault!r}")
            raise ConformanceError(msg)
        index = fault.get("task_index")
        if index is not None and (not isinstance(index, int) or
                                  not 0 <= index < len(tasks[component])):
            msg = (f"{where}: expected a fault's task_index for {component!r} among "
                   f"0..{len(tasks[component]) - 1} (its tasks {tasks[component]}), "
                   f"received {index!r}")
            raise ConformanceError(msg)


def _hard_exit() -> None:
    os._exit(1)


class TraceHook:
    """A `MessageHook` (heronbridge.shims.storm.inprocess) that traces and injects faults.

    `conf` supplies the options when the handshake's conf lacks them (the runtime does
    not show its own `heronbridge.*` options to components); `exit_process` ends the
    component's process for an `exit` fault (default: this process, at once).
    """

    def __init__(self, conf: dict[str, Any] | None = None, *,
                 exit_process: Callable[[], Any] | None = None) -> None:
        self.conf = dict(conf or {})
        self.exit_process = exit_process or _hard_exit
        self.lock = threading.Lock()
        self.component: str | None = None
        self.task: int | None = None
        self.topology: str | None = None
        self.tasks: dict[str, list[int]] = {}
        self.trace_dir: Path | None = None
        self.file: TextIO | None = None
        self.early: list[dict[str, Any]] = []  # records before the pid is known
        self.seq = 0
        self.awaiting: deque[dict[str, Any]] = deque()  # emits waiting for their targets
        self.faults: list[dict[str, Any]] = []  # those for this task
        self.received = 0  # input tuples seen (not ticks, not heartbeats)
        self.handed = 0  # input tuples passed on to the component
        self.exit_after: int | None = None
        self.started = False

    # -- MessageHook ------------------------------------------------------------------

    def down(self, msg: Any) -> tuple[list[Any], list[Any]]:
        with self.lock:
            if not self.started:
                self.started = True
                self._handshake(msg)
                return [msg], []
            if isinstance(msg, list):  # the task ids of an emit that asked for them
                if self.awaiting:
                    record = self.awaiting.popleft()
                    record["targets"] = list(msg)
                    self._write(record)
                return [msg], []
            if not isinstance(msg, dict):
                return [msg], []
            if "command" in msg:
                self._spout_command(msg)
                return [msg], []
            return self._tuple(msg)

    def up(self, msg: Any) -> list[Any]:
        with self.lock:
            if isinstance(msg, dict):
                self._from_component(msg)
            return [msg]

    def close(self) -> None:
        """Write what is still waiting (emits whose targets never came) and close."""
        with self.lock:
            self._close()

    # -- down -------------------------------------------------------------------------

    def _handshake(self, msg: Any) -> None:
        if not isinstance(msg, dict) or not isinstance(msg.get("context"), dict):
            text = f"expected the handshake {{conf, context, pidDir}} first, received {msg!r}"
            raise ConformanceError(text)
        conf, context = msg.get("conf") or {}, msg["context"]
        if not isinstance(context.get("taskid"), int) or context.get("componentid") is None:
            text = (f"expected the handshake's context to name the task (taskid, "
                    f"componentid), received {context!r}")
            raise ConformanceError(text)
        self.component = str(context["componentid"])
        self.task = context["taskid"]
        self.topology = conf.get("topology.name")
        tasks: dict[str, list[int]] = {}
        for task, component in (context.get("task->component") or {}).items():
            tasks.setdefault(str(component), []).append(int(task))
        self.tasks = {c: sorted(ids) for c, ids in sorted(tasks.items())}

        def option(key: str) -> Any:
            return conf[key] if conf.get(key) is not None else self.conf.get(key)

        where = self.where()
        faults = read_faults(option(schema.FAULTS), where)
        # A spout reads no user component (on Storm it does read the ackers' streams);
        # whether other components are spouts only they can tell.
        sources = context.get("source->stream->grouping") or {}
        spouts = set() if any(not str(s).startswith("__") for s in sources) \
            else {self.component}
        check_faults(faults, self.tasks, spouts, where)
        mine = self.tasks.get(self.component, [self.task])
        index = mine.index(self.task) if self.task in mine else None
        self.faults = [f for f in faults if f["component"] == self.component and
                       f.get("task_index") in (None, index)]
        trace_dir = option(schema.TRACE_DIR)
        self.trace_dir = Path(trace_dir) if trace_dir else None
        exits = [f["after"] for f in self.faults if f["kind"] == "exit"]
        if exits and not self._exited_before():
            self.exit_after = min(exits)

    def _exited_before(self) -> bool:
        """An exit fault ends a task once: a restarted task that finds its earlier
        incarnation's exit record in the traces keeps running."""
        if self.trace_dir is None or not self.trace_dir.is_dir():
            return False
        for path in self.trace_dir.glob(f"{self.component}-{self.task}-*.jsonl"):
            try:
                if '"ev":"exit"' in path.read_text(errors="replace"):
                    return True
            except OSError:
                continue
        return False

    def _spout_command(self, msg: dict[str, Any]) -> None:
        command = msg.get("command")
        if command == "ack":
            self._record(schema.SPOUT_ACK, msg_id=_text(msg.get("id")))
        elif command == "fail":
            self._record(schema.SPOUT_FAIL, msg_id=_text(msg.get("id")))
        elif command == "activate":
            self._record(schema.ACTIVATE)
        elif command == "deactivate":
            self._record(schema.DEACTIVATE)

    def _tuple(self, msg: dict[str, Any]) -> tuple[list[Any], list[Any]]:
        stream = msg.get("stream")
        if stream == schema.HEARTBEAT_STREAM:
            self._maybe_exit()
            return [msg], []
        tup_id = str(msg.get("id"))
        self._record(schema.RECV, id=tup_id, src=msg.get("comp"), stream=stream,
                     src_task=msg.get("task"), values=_text(msg.get("tuple")))
        self._maybe_exit()
        if msg.get("comp") == schema.SYSTEM_COMPONENT and stream == schema.TICK_STREAM:
            return [msg], []
        self.received += 1
        for fault in self.faults:
            kind = fault["kind"]
            if kind == "exit" or self.received % fault["every"]:
                continue
            if kind == "fail":
                self._record(schema.FAIL, id=tup_id, injected=True)
                return [], [{"command": "fail", "id": msg.get("id")}]
            self._record(schema.DROP, id=tup_id)
            return [], []
        self.handed += 1
        return [msg], []

    def _maybe_exit(self) -> None:
        """End the process at the first message after `after` tuples were handed on: the
        component has had them (in-process, it has processed them)."""
        if self.exit_after is None or self.handed < self.exit_after:
            return
        self._record(schema.EXIT, reason=f"injected: exit after {self.exit_after} input "
                     f"tuples")
        self._close()
        self.exit_process()

    # -- up ---------------------------------------------------------------------------

    def _from_component(self, msg: dict[str, Any]) -> None:
        command = msg.get("command")
        if command == "emit":
            direct = msg.get("task")
            record = self._make(schema.EMIT, stream=msg.get("stream") or "default",
                                values=_text(msg.get("tuple")),
                                anchors=[str(a) for a in _anchors(msg.get("anchors"))],
                                direct=direct,
                                msg_id=_text(msg["id"]) if msg.get("id") is not None else None,
                                targets=None)
            if record is None:
                return
            if direct is None and msg.get("need_task_ids", True):
                self.awaiting.append(record)  # written when Storm's side answers
            else:
                self._write(record)
        elif command == "ack":
            self._record(schema.ACK, id=str(msg.get("id")), injected=False)
        elif command == "fail":
            self._record(schema.FAIL, id=str(msg.get("id")), injected=False)
        elif command == "error":
            self._record(schema.ERROR, msg=str(msg.get("msg")))
        elif command is None and "pid" in msg:
            self._open(int(msg["pid"]))

    # -- records ----------------------------------------------------------------------

    def where(self) -> str:
        parts = [f"topology {self.topology!r}"] if self.topology else []
        parts += [f"component {self.component!r}", f"task {self.task}"]
        return ", ".join(parts) + " (tracing hook)"

    def _make(self, ev: str, **fields: Any) -> dict[str, Any] | None:
        if self.trace_dir is None:
            return None
        return {"t": time.time(), "seq": None, "ev": ev, "component": self.component,
                "task": self.task, **fields}

    def _record(self, ev: str, **fields: Any) -> None:
        record = self._make(ev, **fields)
        if record is not None:
            self._write(record)

    def _write(self, record: dict[str, Any] | None) -> None:
        if record is None:
            return
        if self.file is None:
            self.early.append(record)
            return
        record["seq"] = self.seq
        self.seq += 1
        self.file.write(json.dumps(record, separators=(",", ":"), ensure_ascii=False) + "\n")

    def _open(self, pid: int) -> None:
        if self.trace_dir is None or self.file is not None:
            return
        self.trace_dir.mkdir(parents=True, exist_ok=True)
        path = self.trace_dir / schema.trace_file_name(self.component, self.task, pid)
        # Line-buffered: every record is on disk before the next message, whatever
        # ends the process.
        self.file = path.open("a", buffering=1, encoding="utf-8")
        atexit.register(self.close)
        early, self.early = self.early, []
        self._write(self._make(schema.START, pid=pid, tasks=self.tasks))
        for record in early:
            self._write(record)

    def _close(self) -> None:
        while self.awaiting:
            self._write(self.awaiting.popleft())
        if self.file is not None:
            self.file.flush()
            self.file.close()
            self.file = None
            self.trace_dir = None  # nothing more is written after close


def _anchors(anchors: Any) -> list[Any]:
    if anchors is None:
        return []
    if isinstance(anchors, (list, tuple)):
        return list(anchors)
    return [anchors]  # Storm accepts one id as well as a list
