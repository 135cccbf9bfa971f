"""State manager on the local filesystem: one file per node, replaced atomically.

The root and its folders are the owner's only (0700), every node file is 0600: the
topology's link secret lives here too. Watches poll, as Heron's local state manager does.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

from ..errors import StateManagerError
from .base import KINDS, OWNER_ONLY, StateManager, Watch

POLL_SECS = 0.05


class LocalFileStateManager(StateManager):
    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.uri = str(self.root)
        try:
            self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
            for kind in KINDS:
                (self.root / kind).mkdir(mode=0o700, exist_ok=True)
            for kind in OWNER_ONLY:
                os.chmod(self.root / kind, 0o700)
        except OSError as exc:
            msg = f"cannot create the state folders under {self.root}: {exc}"
            raise StateManagerError(msg) from exc
        self._watches: list[_Polled] = []
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._poller: threading.Thread | None = None

    def _path(self, kind: str, name: str) -> Path:
        if kind not in KINDS or not name or "/" in name or name.startswith("."):
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

    def stamp(self, kind: str, name: str) -> object | None:
        """A node is replaced, never edited: a new file (inode) each write, or ("missing",)."""
        try:
            st = os.stat(self._path(kind, name))
        except FileNotFoundError:
            return ("missing",)
        except OSError:
            return None
        return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)

    def _write(self, kind: str, name: str, data: bytes) -> None:
        """Replace the node's file so that a crash (of this process or of the machine)
        leaves either the old bytes or the new ones: the new file reaches the disk
        before it takes the old one's name, and the folder's new entry after."""
        path = self._path(kind, name)
        tmp = None
        try:
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{name}.")  # mode 0600
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
            tmp = None
            _fsync_folder(path.parent)
        except OSError as exc:
            msg = f"cannot write state node {kind}/{name} under {self.root}: {exc}"
            raise StateManagerError(msg) from exc
        finally:
            if tmp is not None:  # not renamed: leave no partial file behind
                with contextlib.suppress(OSError):
                    os.unlink(tmp)

    def _claim(self, kind: str, name: str, data: bytes) -> None:
        self._write(kind, name, data)  # no sessions here: the newest holder wins

    def delete(self, kind: str, name: str) -> None:
        path = self._path(kind, name)
        try:
            path.unlink()
        except FileNotFoundError:
            return
        with contextlib.suppress(OSError):
            _fsync_folder(path.parent)

    def names(self, kind: str) -> list[str]:
        return sorted(p.name for p in (self.root / kind).iterdir() if not p.name.startswith("."))

    # -- watches: one polling thread per state manager ----------------------------

    def _watch(self, kind: str, name: str, changed: Callable[[bytes | None], None],
               watch: Watch) -> None:
        with self._lock:
            self._watches.append(_Polled(self._path(kind, name), changed, watch))
            if self._poller is None:
                self._poller = threading.Thread(target=self._poll, name="state-watch",
                                                daemon=True)
                self._poller.start()
        self._wake.set()

    def _poll(self) -> None:
        while True:
            self._wake.clear()
            with self._lock:
                self._watches = [w for w in self._watches if not w.watch.cancelled]
                watches = list(self._watches)
                if not watches:  # nothing left to follow: the next watch starts a poller
                    self._poller = None
                    return
            for polled in watches:
                polled.check()
            self._wake.wait(POLL_SECS)


def _fsync_folder(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class _Polled:
    """One watched node and what its file looked like at the last look."""

    UNSEEN = object()

    def __init__(self, path: Path, changed: Callable[[bytes | None], None],
                 watch: Watch) -> None:
        self.path = path
        self.changed = changed
        self.watch = watch
        self.last: object = self.UNSEEN

    def check(self) -> None:
        try:
            st = self.path.stat()
            seen: object = (st.st_ino, st.st_mtime_ns, st.st_size)
        except OSError:
            seen = None
        if seen == self.last:
            return
        self.last = seen
        data = None
        if seen is not None:
            with contextlib.suppress(OSError):
                data = self.path.read_bytes()
        self.changed(data)
