"""The tracing hook: sees every multilang message between Storm's side and one task,
writes what the task did as trace records (see `schema`, `tracefile`), injects faults,
stops a spout at the run's bound, and seeds the task's random numbers.

The same class runs on both systems: in-process on the runtime (named by the topology
option `heronbridge.storm.hook`), and inside the multilang proxy (`proxy.py`) wherever a
component is a subprocess, on Storm or on the runtime.

A record costs the task an append to a list: a thread of the hook writes the list as
one block every FLUSH_SECS (or at BLOCK_ROWS records), with a head that sums the task up
so far (records per event, msg ids pending, the latest activity) for the progress
reader, which then never reads the records themselves.
"""

from __future__ import annotations

import atexit
import itertools
import json
import os
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from operator import itemgetter
from pathlib import Path
from typing import Any

from .. import ConformanceError
from . import schema, seed, tracefile
from .tracefile import CODE

FAULT_COUNTS = {"fail": "every", "drop": "every", "exit": "after"}
HOOK_PATH = "heronbridge.conformance.trace.hook:TraceHook"
FLUSH_SECS = 0.2
BLOCK_ROWS = 4096
PENDING_SHOWN = 5
SYNC = {"command": "sync"}
HEARTBEAT, TICK, SYSTEM = schema.HEARTBEAT_STREAM, schema.TICK_STREAM, schema.SYSTEM_COMPONENT
_now = time.time

START, RECV, EMIT, ACK, FAIL = (CODE[e] for e in (schema.START, schema.RECV, schema.EMIT,
                                                  schema.ACK, schema.FAIL))
INJECTED_FAIL, DROP, EXIT, STOP = (CODE[e] for e in (tracefile.INJECTED_FAIL, schema.DROP,
                                                     schema.EXIT, schema.STOP))
SPOUT_EVENTS = {"ack": CODE[schema.SPOUT_ACK], "fail": CODE[schema.SPOUT_FAIL],
                "activate": CODE[schema.ACTIVATE], "deactivate": CODE[schema.DEACTIVATE]}
ERROR = CODE[schema.ERROR]
_sorted_json = schema.SORTED_JSON


def canonical(value: Any) -> bytes:
    try:
        return _sorted_json(value)
    except (TypeError, ValueError, OverflowError):
        return schema.canonical_bytes(value)


def read_option(value: Any, kind: type, what: str, where: str) -> Any:
    """An option that may arrive as JSON text (through a command line or Flux)."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            msg = f"{where}: expected {what} as JSON, received {value!r}"
            raise ConformanceError(msg) from exc
    if not isinstance(value, kind):
        msg = f"{where}: expected {what}, received {value!r}"
        raise ConformanceError(msg)
    return value


def read_faults(value: Any, where: str) -> list[dict[str, Any]]:
    """The faults option as a list of fault mappings (it may arrive as JSON text)."""
    return read_option(value, list, f"{schema.FAULTS} to be a list of faults", where) or []


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
    """A `MessageHook` (heronbridge.shims.storm.inprocess) that traces, injects faults,
    bounds spouts and seeds.

    `conf` supplies the options when the handshake's conf lacks them (the runtime does
    not show its own `heronbridge.*` options to components); `exit_process` ends the
    component's process for an `exit` fault (default: this process, at once); `seeded`
    is called at the handshake, before the component sees it, with the task's seed (or
    None when the run does not seed): by default it seeds this process.
    """

    def __init__(self, conf: dict[str, Any] | None = None, *,
                 exit_process: Callable[[], Any] | None = None,
                 seeded: Callable[[int | None], Any] | None = None) -> None:
        self.conf = dict(conf or {})
        self.exit_process = exit_process or _hard_exit
        self.seeded = seeded or _seed_here
        self.lock = threading.Lock()
        self.component: str | None = None
        self.task: int | None = None
        self.index = 0  # the task's place among its component's tasks
        self.topology: str | None = None
        self.tasks: dict[str, list[int]] = {}
        self.is_spout = False
        self.trace_dir: Path | None = None
        self.tracing = False  # records are kept (a trace folder is set, not yet closed)
        self.writer: tracefile.Writer | None = None
        self.rows: list[Any] = []  # records not yet written
        self.seq = 0  # records written
        self.totals: Counter[int] = Counter()
        self.active: float | None = None  # the latest record that is activity
        self.ticks: set[str] = set()  # tick tuple ids: neither they nor their acks count
        self.pending: set[bytes] = set()  # a spout's msg ids without a callback yet
        self.first_emit: float | None = None
        self.last_emit: float | None = None
        self.awaiting: deque[tuple[Any, ...]] = deque()  # emits waiting for their targets
        self.faults: list[dict[str, Any]] = []  # those for this task
        self.received = 0  # input tuples seen (not ticks, not heartbeats)
        self.handed = 0  # input tuples passed on to the component
        self.exit_after: int | None = None
        self.limit: int | None = None  # emits from next_tuple before the spout stops
        self.seconds: float | None = None  # ... or seconds from its first next_tuple
        self.began: float | None = None
        self.emitted = 0  # emits from next_tuple so far
        self.in_next = False
        self.stopped: dict[str, Any] | None = None
        self.bounded = False
        self.started = False
        self.closed = threading.Event()

    # -- MessageHook ------------------------------------------------------------------

    def down(self, msg: Any) -> tuple[list[Any], list[Any]]:
        with self.lock:
            if msg.__class__ is dict and self.started:  # a tuple or a spout's command
                if "command" in msg:
                    return self._spout_command(msg)
                return self._tuple(msg)
            if not self.started:
                self.started = True
                task_seed = self._handshake(msg)
            elif isinstance(msg, list):  # the task ids of an emit that asked for them
                if self.awaiting:
                    self._add((*self.awaiting.popleft(), tuple(msg)))
                return [msg], []
            else:
                return [msg], []
        self.seeded(task_seed)  # outside the lock: the proxy starts the component here
        return [msg], []

    def up(self, msg: Any) -> list[Any]:
        if msg.__class__ is dict:
            command = msg.get("command")
            with self.lock:
                if command == "emit":
                    self._emit(msg)
                elif command == "sync":
                    self.in_next = False
                else:
                    self._from_component(command, msg)
        return [msg]

    def close(self) -> None:
        with self.lock:
            self._close()

    def flush(self) -> None:
        """Write what is buffered now (it is written every FLUSH_SECS anyway)."""
        with self.lock:
            self._flush()

    @property
    def answering(self) -> bool:
        """The bound stopped this spout: the hook answers `next` itself."""
        return self.stopped is not None

    # -- down -------------------------------------------------------------------------

    def _handshake(self, msg: Any) -> int | None:
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
        self.is_spout = not any(not str(s).startswith("__") for s in sources)
        check_faults(faults, self.tasks, {self.component} if self.is_spout else set(), where)
        mine = self.tasks.get(self.component, [self.task])
        self.index = mine.index(self.task) if self.task in mine else 0
        self.faults = [f for f in faults if f["component"] == self.component and
                       f.get("task_index") in (None, self.index)]
        trace_dir = option(schema.TRACE_DIR)
        self.trace_dir = Path(trace_dir) if trace_dir else None
        self.tracing = self.trace_dir is not None
        exits = [f["after"] for f in self.faults if f["kind"] == "exit"]
        if exits and not self._exited_before():
            self.exit_after = min(exits)
        if self.is_spout:
            self._bound(read_option(option(schema.BOUND), dict, f"{schema.BOUND} to be a "
                                    "mapping", where) or {})
        base = read_option(option(schema.SEED), int, f"{schema.SEED} to be a whole number",
                           where)
        return None if base is None else seed.task_seed(base, self.component, self.index)

    def _bound(self, bound: dict[str, Any]) -> None:
        counts = (bound.get("counts") or {}).get(self.component)
        if counts is not None and self.index < len(counts) and counts[self.index] is not None:
            self.limit = int(counts[self.index])
        elif bound.get("tuples") is not None:
            self.limit = int(bound["tuples"])
        if bound.get("seconds") is not None and counts is None:
            self.seconds = float(bound["seconds"])
        self.bounded = self.limit is not None or self.seconds is not None

    def _exited_before(self) -> bool:
        """An exit fault ends a task once: a restarted task that finds its earlier
        incarnation's exit record in the traces keeps running."""
        if self.trace_dir is None or not self.trace_dir.is_dir():
            return False
        for path in self.trace_dir.glob(f"{self.component}-{self.task}-*{tracefile.SUFFIX}"):
            scan = tracefile.Scan(path)
            scan.more()
            if scan.last is not None and scan.last.totals.get(schema.EXIT):
                return True
        return False

    def _spout_command(self, msg: dict[str, Any]) -> tuple[list[Any], list[Any]]:
        command = msg.get("command")
        if command == "next":
            if self.stopped is None and self.bounded:
                self._maybe_stop()
            if self.stopped is not None:
                return [], [SYNC]
            self.in_next = True
            return [msg], []
        code = SPOUT_EVENTS.get(command)
        if code is not None:
            now = _now()
            if command in ("ack", "fail"):
                msg_id = canonical(msg.get("id"))
                self.pending.discard(msg_id)
                if self.tracing:
                    rows = self.rows
                    rows.append((now, code, msg_id))
                    if len(rows) >= BLOCK_ROWS:
                        self._flush()
            else:
                self._add((now, code))
                if command == "deactivate":
                    # What a task does last when its topology stops: the process may
                    # then end at once (os._exit), before the next block.
                    self._flush()
            self.active = now
        return [msg], []

    def _maybe_stop(self) -> None:
        now = _now()
        if self.began is None:
            self.began = now
        if self.limit is not None and self.emitted >= self.limit:
            reason = "tuples"
        elif self.seconds is not None and now - self.began >= self.seconds:
            reason = "seconds"
        else:
            return
        self.stopped = {"emits": self.emitted, "reason": reason}
        self._add((now, STOP, None, None, None, None, None, None, None, None, reason,
                   {"emits": self.emitted}))
        self.active = now

    def _tuple(self, msg: dict[str, Any]) -> tuple[list[Any], list[Any]]:
        stream = msg.get("stream")
        if stream == HEARTBEAT:
            if self.exit_after is not None:
                self._maybe_exit()
            return [msg], []
        tup_id = msg.get("id")
        if tup_id.__class__ is not str:
            tup_id = str(tup_id)
        now = _now()
        src = msg.get("comp")
        if self.tracing:
            rows = self.rows
            rows.append((now, RECV, tup_id, stream, canonical(msg.get("tuple")), src,
                         msg.get("task")))
            if len(rows) >= BLOCK_ROWS:
                self._flush()
        if stream == TICK and src == SYSTEM:
            self.ticks.add(tup_id)
            if self.exit_after is not None:
                self._maybe_exit()
            return [msg], []
        self.active = now
        if self.exit_after is not None:
            self._maybe_exit()
        self.received += 1
        if self.faults:
            for fault in self.faults:
                kind = fault["kind"]
                if kind == "exit" or self.received % fault["every"]:
                    continue
                if kind == "fail":
                    self._add((now, INJECTED_FAIL, tup_id))
                    return [], [{"command": "fail", "id": msg.get("id")}]
                self._add((now, DROP, tup_id))
                return [], []
        self.handed += 1
        return [msg], []

    def _maybe_exit(self) -> None:
        """End the process at the first message after `after` tuples were handed on: the
        component has had them (in-process, it has processed them)."""
        if self.exit_after is None or self.handed < self.exit_after:
            return
        now = _now()
        self._add((now, EXIT, None, None, None, None, None, None, None, None,
                   f"injected: exit after {self.exit_after} input tuples"))
        self.active = now
        self._close()
        self.exit_process()

    # -- up ---------------------------------------------------------------------------

    def _from_component(self, command: Any, msg: dict[str, Any]) -> None:
        if command in ("ack", "fail"):
            tup_id = msg.get("id")
            if tup_id.__class__ is not str:
                tup_id = str(tup_id)
            now = _now()
            if self.tracing:
                rows = self.rows
                rows.append((now, ACK if command == "ack" else FAIL, tup_id))
                if len(rows) >= BLOCK_ROWS:
                    self._flush()
            if tup_id in self.ticks:
                self.ticks.discard(tup_id)
            else:
                self.active = now
        elif command == "error":
            now = _now()
            self._add((now, ERROR, None, None, None, None, None, None, None, None,
                       str(msg.get("msg"))))
            self.active = now
            self._flush()  # a component that reports an error may be about to die
        elif command is None and "pid" in msg:
            self._open(int(msg["pid"]))

    def _emit(self, msg: dict[str, Any]) -> None:
        now = _now()
        direct = msg.get("task")
        msg_id = msg.get("id")
        if msg_id is not None:
            msg_id = canonical(msg_id)
            if self.is_spout:
                self.pending.add(msg_id)
        anchors = msg.get("anchors")
        if anchors:
            # Storm accepts one id as well as a list; ids are text
            anchors = tuple(anchors) if anchors.__class__ is list and \
                anchors[0].__class__ is str else tuple(
                    str(a) for a in (anchors if isinstance(anchors, (list, tuple))
                                     else [anchors]))
        else:
            anchors = ()
        # Rows are tuples of plain values: the garbage collector stops tracking them.
        row = (now, EMIT, msg_id, msg.get("stream") or "default",
               canonical(msg.get("tuple")), None, None, anchors, direct)
        self.active = self.last_emit = now
        if self.first_emit is None:
            self.first_emit = now
        if self.in_next:
            self.emitted += 1
        if direct is None and msg.get("need_task_ids", True):
            self.awaiting.append(row)  # written when Storm's side answers
        elif self.tracing:
            rows = self.rows
            rows.append(row)
            if len(rows) >= BLOCK_ROWS:
                self._flush()

    # -- records ----------------------------------------------------------------------

    def where(self) -> str:
        parts = [f"topology {self.topology!r}"] if self.topology else []
        parts += [f"component {self.component!r}", f"task {self.task}"]
        return ", ".join(parts) + " (tracing hook)"

    def _add(self, row: Any) -> None:
        if self.tracing:
            rows = self.rows
            rows.append(row)
            if len(rows) >= BLOCK_ROWS:
                self._flush()

    def _open(self, pid: int) -> None:
        if self.trace_dir is None or self.writer is not None:
            return
        self.trace_dir.mkdir(parents=True, exist_ok=True)
        now = _now()
        self.writer = tracefile.Writer(
            self.trace_dir / tracefile.file_name(self.component, self.task, pid),
            {"component": self.component, "task": self.task, "pid": pid, "t": now,
             "spout": self.is_spout, "topology": self.topology, "tasks": self.tasks})
        self.rows.insert(0, (now, START, None, None, None, None, None, None, None, None, None,
                             {"pid": pid, "tasks": self.tasks}))
        self.active = self.active or now
        atexit.register(self.close)
        threading.Thread(target=self._flusher, name="trace-flush", daemon=True).start()

    def _flusher(self) -> None:
        while not self.closed.wait(FLUSH_SECS):
            with self.lock:
                self._flush()

    def _flush(self) -> None:
        """Write the records so far as one block (the lock is held)."""
        if self.writer is None or not self.rows:
            return
        rows, self.rows = self.rows, []
        self.totals.update(map(itemgetter(1), rows))
        head = {"n": len(rows), "seq": self.seq, "t1": rows[-1][0], "active": self.active,
                "totals": {tracefile.EVENTS[c]: n for c, n in self.totals.items()},
                "pending": len(self.pending),
                "pending_ids": [i.decode() for i in itertools.islice(self.pending,
                                                                      PENDING_SHOWN)],
                "first_emit": self.first_emit, "last_emit": self.last_emit,
                "emitted": self.emitted, "stopped": self.stopped}
        self.seq += len(rows)
        self.writer.block(head, rows)

    def _close(self) -> None:
        while self.awaiting:  # their targets never came
            self._add(self.awaiting.popleft())
        self.closed.set()
        if self.writer is not None:
            self._flush()
            self.writer.close()
            self.writer = None
        self.trace_dir = None  # nothing more is written after close
        self.tracing = False


def _seed_here(task_seed: int | None) -> None:
    if task_seed is not None:
        seed.seed_process(task_seed)
