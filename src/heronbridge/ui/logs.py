"""A topology's task logs merged by time, and followed: what `heronbridge logs` prints and
the page's log tail shows.

A container's folder on this host is read directly; one on another host (a Spark
worker's) through its stream manager, which reads its own tasks' logs for a link that
proved the topology's secret (runtime.control.read_logs). Each task's log is read from the
end it had reached; a line without a time of its own (a stack trace's) goes with the line
before it. Only files this user owns are read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from heronbridge.runtime import control
from heronbridge.runtime.errors import SchedulerError
from heronbridge.runtime.logfiles import MAX_READ, events_name, read_log, task_log_name
from heronbridge.runtime.proto.control_pb2 import SAMPLED_EVENTS, TASK_LOG, TaskFile
from heronbridge.runtime.proto.plans_pb2 import StreamManagerInfo
from heronbridge.runtime.statemgr import StateManager

from . import NotFound
from .files import tail, task_log
from .tracker import Topology

# The runtime's and the shims' log lines begin with logging's asctime.
_STAMP = re.compile(r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3})")


@dataclass
class Followed:
    task: int
    component: str
    path: Path | None  # on this host; None: read by its container's stream manager
    offset: int = -1  # -1: not read yet (the first read takes the last MAX_READ bytes)
    partial: bytes = b""  # a last line not yet ended
    last_ts: float = 0.0


def tasks_of(t: Topology, selector: str | None) -> list[tuple[int, str]]:
    """(task, component) of every task, of one component, or the one task `selector` names."""
    found = [(inst.task_id, inst.component)
             for c in (t.nodes.packing.containers if t.nodes.packing else [])
             for inst in c.instances]
    if selector is None:
        return sorted(found)
    chosen = [(task, comp) for task, comp in found
              if comp == selector or (selector.isdigit() and task == int(selector))]
    if not chosen:
        components = sorted({comp for _, comp in found})
        msg = (f"topology {t.name!r}: expected a component ({', '.join(components)}) or a "
               f"task id (1 to {max((task for task, _ in found), default=0)}), received "
               f"{selector!r}")
        raise NotFound(msg)
    return sorted(chosen)


def _followed(t: Topology, home: Path | None, task: int, component: str,
              file: TaskFile) -> Followed:
    named = events_name if file == SAMPLED_EVENTS else task_log_name
    try:
        return Followed(task, component, task_log(t, home, task, named))
    except NotFound:  # its container's folder is on another host
        return Followed(task, component, None)


class TaskLogs:
    """The logs (or another `file`: the sampled tuples) of some tasks of a topology, each
    read on from where the last read ended, at most `max_bytes` at a time; one session
    per remote stream manager, kept while they are followed."""

    def __init__(self, statemgr: StateManager, t: Topology, home: Path | None,
                 tasks: list[tuple[int, str]], file: TaskFile = TASK_LOG,
                 max_bytes: int = MAX_READ) -> None:
        self.statemgr = statemgr
        self.name = t.name
        self.file, self.max_bytes = file, max_bytes
        self.followed = [_followed(t, home, task, component, file)
                         for task, component in tasks]
        self.sessions: dict[str, control.Session] = {}  # stream manager id -> session
        self.placement: dict[int, StreamManagerInfo] = {}  # remote task -> its stmgr

    def read_new(self, strict: bool = True) -> list[tuple[float, int, str]]:
        """The complete lines written since the last read, (time, task, line), by time.
        Not `strict`: a stream manager out of reach (restarting) is asked again next time."""
        out: list[tuple[float, int, str]] = []
        for f, start, data in self.read(strict):
            out.extend(_lines(f, start, data))
        out.sort(key=lambda item: (item[0], item[1]))  # stable: a task's lines keep their order
        return out

    def read(self, strict: bool = True) -> list[tuple[Followed, int, bytes]]:
        """What each file has past its offset: (its task, where the bytes start, them)."""
        return [*self._local(), *self._remote(strict)]

    def _local(self) -> list[tuple[Followed, int, bytes]]:
        found = []
        for f in self.followed:
            if f.path is not None and (read := read_log(f.path, f.offset, self.max_bytes)):
                found.append((f, *read))
        return found

    def _remote(self, strict: bool) -> list[tuple[Followed, int, bytes]]:
        by_stmgr: dict[str, list[Followed]] = {}
        stmgrs = {}
        for f in self.followed:
            if f.path is None:
                if f.task not in self.placement:
                    try:
                        self.placement[f.task] = control.stmgr_of(self.statemgr, self.name,
                                                                  f.task)
                    except SchedulerError as exc:  # not running (or between two plans)
                        if strict:
                            raise NotFound(str(exc)) from exc
                        continue
                stmgr = self.placement[f.task]
                by_stmgr.setdefault(stmgr.id, []).append(f)
                stmgrs[stmgr.id] = stmgr
        found: list[tuple[Followed, int, bytes]] = []
        for sid, group in by_stmgr.items():
            try:
                session = self.sessions.get(sid)
                if session is None or session.closed:
                    session = self.sessions[sid] = control.stmgr_session(
                        self.statemgr, self.name, stmgrs[sid])
                chunks = control.read_logs(session, {f.task: f.offset for f in group},
                                           self.max_bytes, file=self.file)
            except SchedulerError:
                if strict:
                    raise
                self.sessions.pop(sid, None)
                for f in group:  # a restarted stream manager listens elsewhere
                    self.placement.pop(f.task, None)
                continue
            found.extend((f, c.offset, c.data) for f, c in zip(group, chunks, strict=True)
                         if not c.missing)
        return found

    def close(self) -> None:
        for session in self.sessions.values():
            session.close()
        self.sessions.clear()

    def __enter__(self) -> TaskLogs:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _lines(f: Followed, start: int, data: bytes) -> list[tuple[float, int, str]]:
    if start != f.offset:  # a first read, or the file was rotated: from a line's start
        f.partial = b""
    f.offset = start + len(data)
    data = f.partial + data
    complete, _, f.partial = data.rpartition(b"\n")
    if not complete:
        f.partial = data
        return []
    out = []
    for raw in complete.split(b"\n"):
        line = raw.decode("utf-8", errors="replace")
        found = _STAMP.match(line)
        if found:
            try:
                when = datetime.strptime(found.group(1), "%Y-%m-%d %H:%M:%S")
                f.last_ts = when.timestamp() + int(found.group(2)) / 1000
            except ValueError:
                pass
        out.append((f.last_ts, f.task, f"[{f.component} {f.task}] {line}"))
    return out


def open_logs(statemgr: StateManager, t: Topology, home: Path | None, selector: str | None,
              lines: int) -> tuple[TaskLogs, list[tuple[float, int, str]]]:
    """The followed logs, and the last `lines` lines of all of them merged by time."""
    logs = TaskLogs(statemgr, t, home, tasks_of(t, selector))
    try:
        merged = logs.read_new()
    except BaseException:
        logs.close()
        raise
    return logs, merged[-lines:] if lines > 0 else []


def task_tail(statemgr: StateManager, t: Topology, home: Path | None, task: int,
              lines: int) -> str:
    """The last `lines` lines of one task's log (the page's log tail)."""
    component = next((c for tk, c in tasks_of(t, None) if tk == task), None)
    if component is None:
        msg = f"topology {t.name!r} has no task {task}"
        raise NotFound(msg)
    with TaskLogs(statemgr, t, home, [(task, component)]) as logs:
        f = logs.followed[0]
        if f.path is not None:
            return tail(f.path, lines)
        found = logs.read()
    if not found:
        msg = f"topology {t.name!r}: no log yet of task {task}"
        raise NotFound(msg)
    text = found[0][2].decode("utf-8", errors="replace")
    return "\n".join(text.splitlines()[-lines:])
