"""The files a container's processes write: each process's log and the container's
metrics.jsonl, rotated as Python's logging rotates its files (past `max_bytes`, NAME
becomes NAME.1, NAME.1 becomes NAME.2, ..., and the oldest beyond `backup_count` goes;
`heronbridge.log.max.bytes`, `heronbridge.log.backup.count`)."""

from __future__ import annotations

import os
from logging.handlers import RotatingFileHandler
from pathlib import Path
from typing import BinaryIO, TextIO, cast

# The folder of a task's own log, which its executor tells it (its output is a pipe).
LOG_DIR_ENV = "HERONBRIDGE_LOG_DIR"


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
