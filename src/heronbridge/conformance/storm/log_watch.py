"""Reading Storm's log while it is written, for the lines after which waiting is pointless."""

from __future__ import annotations

from pathlib import Path

from .traps import is_fatal


class LogWatch:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.partial = b""

    def poll(self) -> str | None:
        """The first fatal line written since the last poll, if any."""
        try:
            with self.path.open("rb") as f:
                f.seek(self.offset)
                data = f.read()
        except OSError:
            return None
        self.offset += len(data)
        data = self.partial + data
        end = data.rfind(b"\n")
        if end < 0:
            self.partial = data
            return None
        self.partial = data[end + 1:]
        for line in data[:end].decode(errors="replace").splitlines():
            if is_fatal(line):
                return line
        return None
