"""A topology's sampled tuples (runtime.sampling), as the page shows them live: the latest
events of every task on this host, or of one component's, merged by time. Only files
this user owns are read, and only their ends."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from heronbridge.runtime.sampling import events_path

from . import NotFound
from .files import container_dir
from .tracker import Topology

LATEST = 200  # events one answer carries at most (and all one task's file may give)
READ = 1 << 16  # bytes read from the end of each task's file: LATEST lines of a few hundred


def _last_lines(path: Path) -> list[bytes]:
    try:
        with path.open("rb") as f:
            if os.fstat(f.fileno()).st_uid != os.getuid():
                return []
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - READ))
            data = f.read()
    except FileNotFoundError:
        return []
    lines = data.split(b"\n")
    return (lines[1:] if size > READ else lines)[-LATEST - 1:]  # the first may be cut


def sampled(t: Topology, home: Path | None, component: str | None = None,
            after_ms: int = 0) -> list[dict[str, Any]]:
    """The latest LATEST events newer than `after_ms`, oldest first."""
    found: list[dict[str, Any]] = []
    for container in (t.nodes.packing.containers if t.nodes.packing else []):
        try:
            logs = container_dir(t, home, container.id) / "logs"
        except NotFound:
            continue  # a container on another host
        for inst in container.instances:
            if component and inst.component != component:
                continue
            for line in _last_lines(events_path(logs, inst.task_id, inst.component)):
                try:
                    event = json.loads(line)
                except ValueError:
                    continue  # a line being written, or cut by the read
                if isinstance(event, dict) and event.get("ts", 0) > after_ms:
                    found.append(event)
    found.sort(key=lambda e: (e.get("ts", 0), e.get("task", 0)))
    return found[-LATEST:]
