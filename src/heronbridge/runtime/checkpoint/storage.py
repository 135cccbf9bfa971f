"""Where checkpointed state lives: Heron's LocalFileSystemStorage layout.

    <root>/<topology>/<checkpoint id>/<component>/<task>

one file per stateful task and checkpoint, written by the task itself (no state crosses a
stream manager). On one host `root` is a local folder; with containers on several hosts
it must be a path every host shares (an NFS or similar mount). Folders are 0700 and
files 0600: state is readable by its owner only.

State is the one thing the runtime unpickles that no peer authenticated, so nothing
found on disk is trusted unless it is the owner's: every folder from the topology's down
must be ours and writable by nobody else (the root may be a shared folder with the
sticky bit, as /tmp is), files are opened without following links, and every file
starts with an HMAC of its bytes and of whose state it is (topology, checkpoint,
component, task) under a key the topology's owner keeps in the state manager: a file
that was not written under it is refused by name.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
import shutil
import stat
from pathlib import Path

from ..errors import CheckpointError, where

MAGIC = b"HBC1"
TAG = hashlib.sha256().digest_size


class CheckpointStorage:
    def __init__(self, root: str, topology: str, key: bytes | None = None) -> None:
        """`key`: the topology's checkpoint key (tasks have it; the master, which reads
        no state, does not)."""
        self.topology = topology
        self.root = Path(os.path.expanduser(root))
        self.base = self.root / topology
        self.key = key

    def path(self, checkpoint_id: str, component: str, task: int) -> Path:
        return self.base / checkpoint_id / component / str(task)

    def save(self, checkpoint_id: str, component: str, task: int, blob: bytes) -> None:
        """Write atomically and durably: a rollback after a crash finds a whole file or
        none (the checkpoint is then not consistent, and never used)."""
        path = self.path(checkpoint_id, component, task)
        loc = where(self.topology, component, task)
        try:
            self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
            _check_root(self.root, loc)
            for folder in (self.base, path.parent.parent, path.parent):
                try:
                    folder.mkdir(mode=0o700)
                except FileExistsError:
                    pass
                _check_folder(folder, loc)
            tmp = path.with_name(f".{task}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            try:
                with os.fdopen(fd, "wb") as f:
                    for part in (MAGIC, self._tag(checkpoint_id, component, task, blob), blob):
                        f.write(part)
                    f.flush()
                    os.fsync(f.fileno())
                os.replace(tmp, path)
            except BaseException:  # not written whole (a full disk): leave no part behind
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
        except OSError as exc:
            msg = f"{loc}: cannot save checkpoint {checkpoint_id} to {path}: {exc}"
            raise CheckpointError(msg) from exc

    def load(self, checkpoint_id: str, component: str, task: int) -> bytes | None:
        """The task's saved state, or None if it saved none (a component without state)."""
        path = self.path(checkpoint_id, component, task)
        loc = where(self.topology, component, task)
        try:
            for folder in (self.base, path.parent.parent, path.parent):
                _check_folder(folder, loc)
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        except FileNotFoundError:
            return None
        except OSError as exc:
            msg = f"{loc}: cannot read checkpoint {checkpoint_id} from {path}: {exc}"
            raise CheckpointError(msg) from exc
        with os.fdopen(fd, "rb") as f:
            info = os.fstat(f.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
                msg = (f"{loc}: checkpoint {checkpoint_id} at {path} is not a file of this "
                       f"user's (uid {info.st_uid}); refused")
                raise CheckpointError(msg)
            data = f.read()
        tag, blob = data[len(MAGIC):len(MAGIC) + TAG], data[len(MAGIC) + TAG:]
        if data[:len(MAGIC)] != MAGIC or not hmac.compare_digest(
                tag, self._tag(checkpoint_id, component, task, blob)):
            msg = (f"{loc}: checkpoint {checkpoint_id} at {path} was not written under this "
                   "topology's checkpoint key (altered, corrupt, or not its owner's); refused")
            raise CheckpointError(msg)
        return blob

    def _tag(self, checkpoint_id: str, component: str, task: int, blob: bytes) -> bytes:
        if self.key is None:
            msg = f"{where(self.topology, component, task)}: no checkpoint key to read state with"
            raise CheckpointError(msg)
        whose = b"".join(len(p).to_bytes(2, "little") + p for p in (
            self.topology.encode(), checkpoint_id.encode(), component.encode(),
            str(task).encode()))
        return hmac.new(self.key, whose + blob, hashlib.sha256).digest()

    def tasks(self, checkpoint_id: str, component: str) -> list[int]:
        """The tasks of a component that saved state in a checkpoint, ascending."""
        folder = self.base / checkpoint_id / component
        try:
            _check_folder(folder, where(self.topology, component))
            return sorted(int(p.name) for p in folder.iterdir() if p.name.isdigit())
        except FileNotFoundError:
            return []
        except OSError as exc:
            msg = f"{where(self.topology, component)}: cannot list {folder}: {exc}"
            raise CheckpointError(msg) from exc

    def checkpoints(self) -> list[str]:
        """Every checkpoint id with a folder, oldest first."""
        try:
            _check_folder(self.base, where(self.topology))
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


def _check_folder(folder: Path, loc: str) -> None:
    """A folder of ours that nobody else can write (FileNotFoundError if missing)."""
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode):
        why = "is not a folder (a link?)"
    elif info.st_uid != os.getuid():
        why = f"belongs to uid {info.st_uid}, not to this user ({os.getuid()})"
    elif info.st_mode & 0o022:
        why = f"is writable by others (mode {stat.S_IMODE(info.st_mode):o})"
    else:
        return
    msg = f"{loc}: the checkpoint folder {folder} {why}; refusing to use it"
    raise CheckpointError(msg)


def _check_root(root: Path, loc: str) -> None:
    """The root may be shared (sticky and writable by all, as /tmp); otherwise it is a
    folder of ours like the others."""
    info = os.stat(root)
    if stat.S_ISDIR(info.st_mode) and info.st_mode & stat.S_ISVTX:
        return
    _check_folder(root, loc)
