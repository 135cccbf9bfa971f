"""State manager on the local filesystem: one file per node, replaced atomically."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ..errors import StateManagerError
from .base import NODE_TYPES, StateManager


class LocalFileStateManager(StateManager):
    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        for kind in NODE_TYPES:
            (self.root / kind).mkdir(parents=True, exist_ok=True)

    def _path(self, kind: str, name: str) -> Path:
        if kind not in NODE_TYPES or not name or "/" in name or name.startswith("."):
            msg = f"bad state node {kind}/{name}"
            raise StateManagerError(msg)
        return self.root / kind / name

    def _read(self, kind: str, name: str) -> bytes | None:
        try:
            return self._path(kind, name).read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            msg = f"cannot read state node {kind}/{name} under {self.root}: {exc}"
            raise StateManagerError(msg) from exc

    def _write(self, kind: str, name: str, data: bytes) -> None:
        path = self._path(kind, name)
        try:
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{name}.")
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        except OSError as exc:
            msg = f"cannot write state node {kind}/{name} under {self.root}: {exc}"
            raise StateManagerError(msg) from exc

    def delete(self, kind: str, name: str) -> None:
        try:
            self._path(kind, name).unlink()
        except FileNotFoundError:
            pass

    def names(self, kind: str) -> list[str]:
        return sorted(p.name for p in (self.root / kind).iterdir() if not p.name.startswith("."))
