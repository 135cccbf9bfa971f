"""A topology's files on this host: task logs, container folders, and the conformance
and bench reports that ran it (found under the home, by the topology name they record)."""

from __future__ import annotations

import json
import os
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from heronbridge.runtime.logfiles import task_log_name

from . import BadRequest, NotFound
from .tracker import Topology

MAX_READ = 1 << 20  # bytes one request reads at most
# What `heronbridge conform` and `heronbridge bench` leave in each run folder.
CONFORMANCE, BENCH = "conformance", "bench"
RUN_FILES = {CONFORMANCE: ("plan.json", "report.html"), BENCH: ("bench.json", "")}


def workdir(t: Topology, home: Path | None) -> Path | None:
    """The topology's working folder, if it is on this host."""
    s = t.nodes.scheduler
    if s is not None and s.working_dir and Path(s.working_dir).is_dir():
        return Path(s.working_dir)
    if home is not None:
        folder = home / "topologies" / t.name / "current"
        if folder.is_dir():
            return folder
    return None


def container_dir(t: Topology, home: Path | None, container: int) -> Path:
    root = workdir(t, home)
    if root is None:
        msg = f"topology {t.name!r}: its working folder is not on this host"
        raise NotFound(msg)
    folder = root / f"container-{container}"
    if not folder.is_dir():
        msg = f"topology {t.name!r}: no container {container} in {root}"
        raise NotFound(msg)
    return folder


def inside(folder: Path, relative: str) -> Path:
    """`relative` under `folder`, refusing absolute paths and any way out of it."""
    if relative.startswith("/") or ".." in Path(relative).parts:
        msg = f"expected a relative path inside the container's folder, received {relative!r}"
        raise BadRequest(msg)
    path = (folder / relative).resolve()
    if path != folder.resolve() and folder.resolve() not in path.parents:
        msg = f"{relative!r} leads out of the container's folder"
        raise BadRequest(msg)
    return path


def task_log(t: Topology, home: Path | None, task: int,
             named: Callable[[int, str], str] = task_log_name) -> Path:
    """`container-N/logs/task-ID-COMPONENT.log` of one task (or another file `named`)."""
    for container in (t.nodes.packing.containers if t.nodes.packing else []):
        for inst in container.instances:
            if inst.task_id == task:
                folder = container_dir(t, home, container.id)
                return folder / "logs" / named(task, inst.component)
    msg = f"topology {t.name!r} has no task {task}"
    raise NotFound(msg)


def tail(path: Path, lines: int) -> str:
    """The last `lines` lines of a file (reading at most MAX_READ bytes)."""
    try:
        with path.open("rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - MAX_READ))
            data = f.read()
    except FileNotFoundError as exc:
        msg = f"no log yet at {path}"
        raise NotFound(msg) from exc
    text = data.decode("utf-8", errors="replace")
    return "\n".join(text.splitlines()[-lines:])


def read_chunk(path: Path, offset: int, length: int) -> dict:
    """heron-shell's /filedata: `{data, offset, length}`; offset -1 reads the end."""
    if not path.is_file():
        msg = f"no file {path}"
        raise NotFound(msg)
    size = path.stat().st_size
    length = MAX_READ if length < 0 else min(length, MAX_READ)
    if offset < 0:
        offset = max(0, size - length)
    with path.open("rb") as f:
        f.seek(offset)
        data = f.read(length)
    return {"data": data.decode("utf-8", errors="replace"), "offset": offset,
            "length": len(data)}


def file_stats(folder: Path, path: Path) -> dict:
    """heron-shell's /filestats: `{name: {formatted_stat, is_dir, path}}`."""
    if not path.is_dir():
        msg = f"no folder {path}"
        raise NotFound(msg)
    out = {}
    for entry in sorted(path.iterdir()):
        st = entry.stat()
        rel = str(entry.relative_to(folder))
        out[entry.name] = {
            "formatted_stat": f"{stat.filemode(st.st_mode)} {st.st_size:>10} "
                              f"{time.strftime('%b %d %H:%M', time.localtime(st.st_mtime))} "
                              f"{entry.name}",
            "is_dir": entry.is_dir(), "path": rel}
    return out


@dataclass(frozen=True)
class Report:
    kind: str  # "conformance" | "bench"
    folder: str  # the run folder's name under HOME/<kind>/
    page: str  # the file to open, relative to the folder
    when: float


def reports(home: Path | None, topology: str | None = None) -> list[Report]:
    """The conformance and bench runs under the home, newest first; with `topology`, those
    that ran it."""
    if home is None:
        return []
    found = []
    for kind, (marker, page) in RUN_FILES.items():
        root = home / kind
        if not root.is_dir():
            continue
        for folder in root.iterdir():
            if not (folder / marker).is_file():
                continue
            if topology is not None and _ran(folder / marker) != topology:
                continue
            when = (folder / marker).stat().st_mtime
            found.append(Report(kind, folder.name, page, when))
    return sorted(found, key=lambda r: -r.when)


def _ran(marker: Path) -> str | None:
    try:
        return json.loads(marker.read_text()).get("topology")
    except (OSError, ValueError, AttributeError):
        return None


def report_file(home: Path | None, kind: str, folder: str, relative: str) -> Path:
    if home is None or kind not in RUN_FILES or "/" in folder or folder.startswith("."):
        msg = f"no {kind} report {folder!r}"
        raise NotFound(msg)
    root = home / kind / folder
    if not root.is_dir():
        msg = f"no {kind} report {folder!r}"
        raise NotFound(msg)
    path = inside(root, relative)
    if not path.exists():
        msg = f"no file {relative!r} in {kind} report {folder!r}"
        raise NotFound(msg)
    return path
