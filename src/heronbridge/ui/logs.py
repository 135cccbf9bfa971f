"""A topology's task logs merged by time, and followed: what `heronbridge logs` prints.

Each task's log is read from the end it had reached; a line without a time of its own (a
stack trace's) goes with the line before it. Only files this user owns are read.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from . import NotFound
from .files import MAX_READ, task_log
from .tracker import Topology

# The runtime's and the shims' log lines begin with logging's asctime.
_STAMP = re.compile(r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3})")


@dataclass
class Followed:
    task: int
    component: str
    path: Path
    offset: int = 0
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


def open_logs(t: Topology, home: Path | None, selector: str | None,
              lines: int) -> tuple[list[Followed], list[tuple[float, int, str]]]:
    """The followed files, and the last `lines` lines of all of them merged by time."""
    followed = []
    for task, component in tasks_of(t, selector):
        path = task_log(t, home, task)
        f = Followed(task, component, path)
        try:
            size = path.stat().st_size
        except FileNotFoundError:
            size = 0
        f.offset = max(0, size - MAX_READ)
        followed.append(f)
    merged = read_new(followed)
    return followed, merged[-lines:] if lines > 0 else []


def read_new(followed: list[Followed]) -> list[tuple[float, int, str]]:
    """The complete lines written since the last read, (time, task, line), by time."""
    out: list[tuple[float, int, str]] = []
    for f in followed:
        try:
            st = f.path.stat()
        except FileNotFoundError:
            continue  # no log yet (a task still starting)
        if st.st_uid != os.getuid():
            continue  # not this user's: never read
        if st.st_size < f.offset:  # truncated or replaced: from its start
            f.offset, f.partial = 0, b""
        if st.st_size == f.offset:
            continue
        with f.path.open("rb") as fh:
            fh.seek(f.offset)
            data = fh.read(MAX_READ)
        f.offset += len(data)
        data = f.partial + data
        complete, _, f.partial = data.rpartition(b"\n")
        if not complete:
            f.partial = data
            continue
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
    out.sort(key=lambda item: (item[0], item[1]))  # stable: a task's lines keep their order
    return out
