"""The files a container's processes write: each process's log and the container's
metrics.jsonl, rotated as Python's logging rotates its files (past `max_bytes`, NAME
becomes NAME.1, NAME.1 becomes NAME.2, ..., and the oldest beyond `backup_count` goes;
`heronbridge.log.max.bytes`, `heronbridge.log.backup.count`)."""

from __future__ import annotations

import os
import stat
from logging.handlers import RotatingFileHandler
from pathlib import Path
from typing import BinaryIO, TextIO, cast

# The folder of a task's own log, which its executor tells it (its output is a pipe).
LOG_DIR_ENV = "HERONBRIDGE_LOG_DIR"
MAX_READ = 1 << 20  # bytes of one log that one read returns at most


def task_log_name(task: int, component: str) -> str:
    """A task's log in its container's logs folder."""
    return f"task-{task}-{component}.log"


def events_name(task: int, component: str) -> str:
    """A task's sampled tuples (runtime.sampling), beside its log."""
    return f"events-{task}-{component}.jsonl"


def read_log(path: Path, offset: int, max_bytes: int) -> tuple[int, bytes] | None:
    """Up to `max_bytes` of a log from `offset` (-1: its last `max_bytes`; past its end:
    from its start, it was rotated): (where they start, the bytes). None when there is no
    such regular file of this user's (never followed through a link)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:  # none yet, a link (ELOOP), or not ours to open
        return None
    st = os.fstat(fd)
    if st.st_uid != os.getuid() or not stat.S_ISREG(st.st_mode):
        os.close(fd)
        return None
    with open(fd, "rb") as f:
        max_bytes = max(0, min(max_bytes, MAX_READ))
        if offset < 0:
            offset = max(0, st.st_size - max_bytes)
        elif offset > st.st_size:
            offset = 0
        f.seek(offset)
        return offset, f.read(max_bytes)


class RotatingOutput(RotatingFileHandler):
    """Bytes appended as they come (a child's output, JSON lines), no file over
    `max_bytes`: what does not fit starts the next file at a line's start (a line longer
    than a whole file is cut)."""

    def __init__(self, path: str | Path, max_bytes: int, backup_count: int) -> None:
        super().__init__(path, mode="a", maxBytes=max_bytes, backupCount=backup_count,
                         encoding="utf-8")

    def _open(self):  # noqa: ANN202 - logging's own hook
        # Owner only: logs hold what components print, metrics what they count.
        fd = os.open(self.baseFilename, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        os.fchmod(fd, 0o600)
        return open(fd, "a", encoding=self.encoding)  # noqa: SIM115 - the handler closes it

    def _buffer(self) -> BinaryIO:
        return cast("TextIO", self.stream).buffer  # opened in __init__, never None

    def write(self, data: bytes) -> None:
        out = self._buffer()
        while len(data) > self.maxBytes - out.tell():
            room = self.maxBytes - out.tell()
            cut = data.rfind(b"\n", 0, max(room, 0)) + 1
            if not cut and not out.tell():
                cut = room
            out.write(data[:cut])
            data = data[cut:]
            out.flush()
            self.doRollover()
            out = self._buffer()
            if out.tell():  # nothing to roll over to (no backups): keep appending
                break
        out.write(data)
        out.flush()


def rotated(path: Path) -> list[Path]:
    """A rotated file's parts, oldest first (NAME.N, ..., NAME.1, NAME), those that exist."""
    backups = sorted((p for p in path.parent.glob(f"{path.name}.*") if p.suffix[1:].isdigit()),
                     key=lambda p: -int(p.suffix[1:]))
    return [*backups, *([path] if path.exists() else [])]
