"""Where checkpointed state lives: Heron's LocalFileSystemStorage layout.

    <root>/<topology>/<checkpoint id>/<component>/<task>

one file per stateful task and checkpoint, written by the task itself (no state crosses a
stream manager). On one host `root` is a local folder; with containers on several hosts
it must be a path every host shares (an NFS or similar mount). Folders are 0700 and
files 0600: state is readable by its owner only, and it is the only thing the runtime
unpickles that no peer authenticated, because only its owner can have written it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from ..errors import CheckpointError, where


class CheckpointStorage:
    def __init__(self, root: str, topology: str) -> None:
        self.topology = topology
        self.base = Path(os.path.expanduser(root)) / topology

    def path(self, checkpoint_id: str, component: str, task: int) -> Path:
        return self.base / checkpoint_id / component / str(task)

    def save(self, checkpoint_id: str, component: str, task: int, blob: bytes) -> None:
        """Write atomically and durably: a rollback after a crash finds a whole file or
        none (the checkpoint is then not consistent, and never used)."""
        path = self.path(checkpoint_id, component, task)
        try:
            self.base.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            for folder in (self.base, path.parent.parent, path.parent):
                folder.mkdir(mode=0o700, exist_ok=True)
            tmp = path.with_name(f".{task}.tmp")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                view = memoryview(blob)
                while view:
                    view = view[os.write(fd, view):]
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, path)
        except OSError as exc:
            msg = (f"{where(self.topology, component, task)}: cannot save checkpoint "
                   f"{checkpoint_id} to {path}: {exc}")
            raise CheckpointError(msg) from exc

    def load(self, checkpoint_id: str, component: str, task: int) -> bytes | None:
        """The task's saved state, or None if it saved none (a component without state)."""
        path = self.path(checkpoint_id, component, task)
        try:
            return path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            msg = (f"{where(self.topology, component, task)}: cannot read checkpoint "
                   f"{checkpoint_id} from {path}: {exc}")
            raise CheckpointError(msg) from exc

    def tasks(self, checkpoint_id: str, component: str) -> list[int]:
        """The tasks of a component that saved state in a checkpoint, ascending."""
        try:
            return sorted(int(p.name) for p in (self.base / checkpoint_id / component).iterdir()
                          if p.name.isdigit())
        except FileNotFoundError:
            return []

    def checkpoints(self) -> list[str]:
        """Every checkpoint id with a folder, oldest first."""
        try:
            return sorted(p.name for p in self.base.iterdir() if p.is_dir())
        except FileNotFoundError:
            return []

    def dispose(self, keep: set[str], before: str) -> list[str]:
        """Delete every checkpoint older than `before` that is not in `keep` (the
        consistent ones still kept, and incomplete ones given up); returns their ids."""
        gone = [c for c in self.checkpoints() if c < before and c not in keep]
        for checkpoint_id in gone:
            shutil.rmtree(self.base / checkpoint_id, ignore_errors=True)
        return gone

    def size(self, checkpoint_id: str) -> int:
        """Bytes of state in one checkpoint."""
        folder = self.base / checkpoint_id
        return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
