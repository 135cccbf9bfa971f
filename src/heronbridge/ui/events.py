"""A topology's sampled tuples (runtime.sampling), as the page shows them live: the latest
events of every task, or of one component's, merged by time; those of tasks on other
hosts read by their containers' stream managers. Only files this user owns are read,
and only their ends."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from heronbridge.runtime.logfiles import read_log
from heronbridge.runtime.proto.control_pb2 import SAMPLED_EVENTS
from heronbridge.runtime.sampling import events_path
from heronbridge.runtime.statemgr import StateManager

from . import NotFound
from .files import container_dir
from .logs import TaskLogs
from .tracker import Topology

LATEST = 200  # events one answer carries at most (and all one task's file may give)
READ = 1 << 16  # bytes read from the end of each task's file: LATEST lines of a few hundred


_parsed: dict[Path, tuple[tuple, list[dict[str, Any]]]] = {}  # path -> (its stat, events)


def _latest(path: Path) -> list[dict[str, Any]]:
    """The file's last LATEST events, parsed again only once it changed (the page asks
    every 2 s, and most tasks' files change less often, or not at all)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return []
    if st.st_uid != os.getuid():
        return []
    key = (st.st_ino, st.st_size, st.st_mtime_ns)
    cached = _parsed.get(path)
    if cached is not None and cached[0] == key:
        return cached[1]
    found = _parsed_lines(_last_lines(path))
    if len(_parsed) > 4096:  # topologies gone
        _parsed.clear()
    _parsed[path] = (key, found)
    return found


def _parsed_lines(lines: list[bytes]) -> list[dict[str, Any]]:
    found = []
    for line in lines[-LATEST - 1:]:
        try:
            event = json.loads(line)
        except ValueError:
            continue  # a line being written, or cut by the read
        if isinstance(event, dict):
            found.append(event)
    return found


def _last_lines(path: Path) -> list[bytes]:
    read = read_log(path, -1, READ)  # a regular file of this user's, never through a link
    return [] if read is None else _whole_lines(*read)


def _whole_lines(start: int, data: bytes) -> list[bytes]:
    """The lines of `data` read from `start`: the first is cut when it is not the file's."""
    return data.split(b"\n")[1 if start else 0:]


def sampled(t: Topology, home: Path | None, component: str | None = None,
            after_ms: int = 0, statemgr: StateManager | None = None) -> list[dict[str, Any]]:
    """The latest LATEST events newer than `after_ms`, oldest first; with `statemgr`,
    those of tasks on other hosts too, read by their containers' stream managers."""
    found: list[dict[str, Any]] = []
    remote: list[tuple[int, str]] = []
    for container in (t.nodes.packing.containers if t.nodes.packing else []):
        chosen = [inst for inst in container.instances
                  if not component or inst.component == component]
        try:
            logs = container_dir(t, home, container.id) / "logs"
        except NotFound:  # a container on another host
            remote.extend((inst.task_id, inst.component) for inst in chosen)
            continue
        for inst in chosen:
            found.extend(_latest(events_path(logs, inst.task_id, inst.component)))
    if remote and statemgr is not None:
        with TaskLogs(statemgr, t, home, remote, SAMPLED_EVENTS, READ) as files:
            for _, start, data in files.read(strict=False):
                found.extend(_parsed_lines(_whole_lines(start, data)))
    found = [e for e in found if e.get("ts", 0) > after_ms]
    found.sort(key=lambda e: (e.get("ts", 0), e.get("task", 0)))
    return found[-LATEST:]
