"""Nimbus's blob store: what `storm jar --jars/--artifacts` (storm-client's
DependencyUploader) and `storm blobstore` keep on Nimbus, by key.

Each blob is `<folder>/<key>/data` with `<key>/meta.json` (its ACL, replication factor and
version), everything owner-only (folders 0700, files 0600). A key is a name, checked as
Storm checks one (word characters, space, tab, `.`, `_`, `-`) and refusing `..`, so it is
one path component; nothing under the folder is read unless it is this user's and no
one else's, and not a symlink. An upload is written beside the store and moved into place
when finished, so a reader sees the old blob or the new one, never half of one. No file
stays open between calls; sessions idle for SESSION_IDLE_SECS are given up.

ACLs are kept and answered as set, not enforced: every caller of this endpoint is already
its owner (the plain port's peers are this user's processes, the TLS port's hold a client
certificate of its CA). There is one copy of each blob: its replication is 1.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import stat
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import NimbusError

KEY = re.compile(r"^[\w \t._-]+$")  # Storm's Utils.BLOB_KEY_PATTERN (Unicode \w)
MAX_KEY_CHARS = 200  # one file name, with room below the 255-byte limit
MAX_BLOB_BYTES = 512 << 20  # one blob (a shaded dependency jar fits)
MAX_STORE_BYTES = 4 << 30  # every blob together
MAX_UPLOADS = 16  # unfinished at once
MAX_DOWNLOADS = 64  # under way at once
SESSION_IDLE_SECS = 600.0  # Storm's socket timeout: a session idle this long is given up
DOWNLOAD_CHUNK = 65536  # Storm's storm.blobstore.inputstream.buffer.size.bytes
LIST_PAGE = 100  # keys per listBlobs answer
DATA, META = "data", "meta.json"
READ, WRITE, ADMIN = 1, 2, 4  # Storm's AccessControl bits
USER, OTHER = 2, 1  # Storm's AccessControlType


class BlobError(NimbusError):
    """A blob call refused: answered as Storm's Nimbus answers a RuntimeException."""


class BlobNotFound(BlobError):
    """Storm's KeyNotFoundException."""


class BlobExists(BlobError):
    """Storm's KeyAlreadyExistsException."""


@dataclass
class Meta:
    """A blob's settable part (Storm's SettableBlobMeta) and its version."""

    acl: list[dict[str, Any]]  # {"type": USER|OTHER, "name": str|None, "access": bits}
    replication_factor: int | None = None
    version: int = 0


@dataclass
class Upload:
    key: str
    path: Path
    meta: Meta | None  # a create's; None: an update keeps the blob's
    size: int = 0
    last: float = field(default_factory=time.monotonic)


@dataclass
class Download:
    key: str
    version: int
    inode: int
    offset: int = 0
    last: float = field(default_factory=time.monotonic)


def check_key(key: Any) -> str:
    """The key, if it is a name Storm accepts and one path component; else BlobError."""
    if not isinstance(key, str) or not key or len(key) > MAX_KEY_CHARS or ".." in key \
            or key == "." or not KEY.match(key):
        msg = (f"{key!r} is not a valid blob key: expected 1 to {MAX_KEY_CHARS} word "
               "characters, spaces, tabs, '.', '_' or '-', without '..' (a key is a "
               "name, not a path)")
        raise BlobError(msg)
    return key


def check_acl(acl: Any) -> list[dict[str, Any]]:
    out = []
    for entry in acl or []:
        kind, access = getattr(entry, "type", None), getattr(entry, "access", None)
        if kind not in (USER, OTHER) or not isinstance(access, int) or \
                not 0 <= access <= READ | WRITE | ADMIN:
            msg = (f"expected ACL entries of type USER or OTHER with access bits within "
                   f"READ|WRITE|ADMIN (7), received {entry!r}")
            raise BlobError(msg)
        out.append({"type": kind, "name": getattr(entry, "name", None), "access": access})
    return out


def _no_such(key: str) -> str:
    return f"{key}: no such blob in this Nimbus's blob store"


def append(path: Path | str, chunk: bytes) -> None:
    """Append to an upload's file, opened for this call only (no symlink followed)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW)
    try:
        view = memoryview(chunk)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def _mine(info: os.stat_result, kind: int) -> bool:
    """This user's, of the file type `kind`, and no one else's to read or write."""
    return info.st_uid == os.getuid() and stat.S_IFMT(info.st_mode) == kind and \
        not info.st_mode & 0o077


class BlobStore:
    def __init__(self, folder: Path, uploads: Path, max_blob_bytes: int = MAX_BLOB_BYTES,
                 max_store_bytes: int = MAX_STORE_BYTES) -> None:
        self.folder = folder
        self.uploads_folder = uploads
        self.max_blob_bytes = max_blob_bytes
        self.max_store_bytes = max_store_bytes
        self.uploads: dict[str, Upload] = {}
        self.downloads: dict[str, Download] = {}
        self.lock = threading.RLock()
        self._drop_stale_uploads()

    def _drop_stale_uploads(self) -> None:
        """Uploads left unfinished (by a run that died, say) and idle for longer than a
        session may be: another endpoint on the same home may be writing the newer ones."""
        cutoff = time.time() - SESSION_IDLE_SECS
        with contextlib.suppress(FileNotFoundError):
            if not _mine(os.lstat(self.uploads_folder), stat.S_IFDIR):
                return  # not ours: left alone, and refused when used
            for entry in os.scandir(self.uploads_folder):
                info = entry.stat(follow_symlinks=False)
                if stat.S_ISREG(info.st_mode) and info.st_uid == os.getuid() and \
                        info.st_mtime < cutoff:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(entry.path)

    # -- the folders, and what is trusted in them ----------------------------------------

    def _root(self, folder: Path) -> Path:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not _mine(os.lstat(folder), stat.S_IFDIR):
            msg = (f"the blob store folder {folder} is not this user's alone (uid "
                   f"{os.getuid()}, mode 0700); refused")
            raise BlobError(msg)
        return folder

    def _blob(self, key: str) -> Path:
        """The blob's folder, if it exists and is trusted; else BlobNotFound."""
        path = self._root(self.folder) / check_key(key)
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            raise BlobNotFound(_no_such(key)) from None
        if not _mine(info, stat.S_IFDIR):
            msg = f"{key}: its folder {path} is not this user's alone; refused"
            raise BlobError(msg)
        return path

    def _open(self, key: str) -> tuple[int, os.stat_result]:
        """The blob's data, opened for reading: a file of this user's alone."""
        path = self._blob(key) / DATA
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        except FileNotFoundError:
            raise BlobNotFound(_no_such(key)) from None
        except OSError as exc:
            msg = f"{key}: cannot read {path}: {exc}"
            raise BlobError(msg) from exc
        info = os.fstat(fd)
        if not _mine(info, stat.S_IFREG):
            os.close(fd)
            msg = f"{key}: {path} is not a file of this user's alone; refused"
            raise BlobError(msg)
        return fd, info

    def meta(self, key: str) -> Meta:
        path = self._blob(key) / META
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError as exc:
            msg = f"{key}: cannot read its metadata {path}: {exc}"
            raise BlobError(msg) from exc
        with os.fdopen(fd) as f:
            if not _mine(os.fstat(f.fileno()), stat.S_IFREG):
                msg = f"{key}: {path} is not a file of this user's alone; refused"
                raise BlobError(msg)
            try:
                return Meta(**json.load(f))
            except (ValueError, TypeError) as exc:
                msg = f"{key}: its metadata {path} is not what this store writes: {exc}"
                raise BlobError(msg) from exc

    def _write_meta(self, folder: Path, meta: Meta) -> None:
        temp = folder / f".{META}.{uuid.uuid4().hex}"
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump(meta.__dict__, f)
        os.replace(temp, folder / META)

    def exists(self, key: str) -> bool:
        try:
            self._blob(key)
        except BlobNotFound:
            return False
        return True

    def keys(self) -> list[str]:
        root = self._root(self.folder)
        found = []
        for entry in os.scandir(root):
            with contextlib.suppress(BlobError):
                if _mine(entry.stat(follow_symlinks=False), stat.S_IFDIR):
                    found.append(check_key(entry.name))
        return sorted(found)

    def _used(self) -> int:
        total = 0
        for key in self.keys():
            with contextlib.suppress(OSError):
                total += os.lstat(self.folder / key / DATA).st_size
        return total

    # -- uploads --------------------------------------------------------------------------

    def begin_create(self, key: str, acl: Any, replication_factor: int | None) -> str:
        check_key(key)
        meta = Meta(check_acl(acl), replication_factor)
        with self.lock:
            if self.exists(key) or any(u.key == key and u.meta is not None
                                       for u in self.uploads.values()):
                msg = f"{key}: a blob of that key exists (or is being created)"
                raise BlobExists(msg)
            return self._begin(key, meta)

    def begin_update(self, key: str) -> str:
        with self.lock:
            self._blob(key)
            return self._begin(key, None)

    def _begin(self, key: str, meta: Meta | None) -> str:
        self._expire()
        if len(self.uploads) >= MAX_UPLOADS:
            msg = (f"{MAX_UPLOADS} blob uploads are unfinished; finish or cancel one, or "
                   f"wait {SESSION_IDLE_SECS:g}s for an idle one to be given up")
            raise BlobError(msg)
        if self._used() >= self.max_store_bytes:
            msg = (f"the blob store holds {self.max_store_bytes} bytes, its limit; delete "
                   "blobs before uploading more")
            raise BlobError(msg)
        session = str(uuid.uuid4())
        path = self._root(self.uploads_folder) / session
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600))
        self.uploads[session] = Upload(key, path, meta)
        return session

    def _upload(self, session: str) -> Upload:
        upload = self.uploads.get(session)
        if upload is None:
            msg = f"Blob for session {session} does not exist (or timed out)"
            raise BlobError(msg)
        return upload

    def write(self, session: str, chunk: bytes) -> None:
        with self.lock:
            upload = self._upload(session)
            if upload.size + len(chunk) > self.max_blob_bytes:
                self.cancel(session)
                msg = (f"{upload.key}: a blob is at most {self.max_blob_bytes} bytes; this "
                       f"upload reached {upload.size + len(chunk)}, and is cancelled")
                raise BlobError(msg)
            append(upload.path, chunk)
            upload.size += len(chunk)
            upload.last = time.monotonic()

    def finish(self, session: str) -> None:
        with self.lock:
            upload = self._upload(session)
            if self._used() + upload.size > self.max_store_bytes:
                self.cancel(session)
                msg = (f"{upload.key}: {upload.size} more bytes would take the blob store "
                       f"past its limit of {self.max_store_bytes}; cancelled")
                raise BlobError(msg)
            del self.uploads[session]
            if upload.meta is not None:  # a create
                folder = self._root(self.folder) / upload.key
                try:
                    folder.mkdir(mode=0o700)
                except FileExistsError:
                    upload.path.unlink(missing_ok=True)
                    msg = f"{upload.key}: a blob of that key exists"
                    raise BlobExists(msg) from None
                meta = upload.meta
            else:
                try:
                    folder, meta = self._blob(upload.key), self.meta(upload.key)
                except BlobError:
                    upload.path.unlink(missing_ok=True)
                    raise
            meta.version = max(time.time_ns() // 1_000_000, meta.version + 1)
            os.replace(upload.path, folder / DATA)
            self._write_meta(folder, meta)

    def cancel(self, session: str) -> None:
        with self.lock:
            upload = self.uploads.pop(session, None)
            if upload is not None:
                upload.path.unlink(missing_ok=True)

    # -- reading, changing, deleting ---------------------------------------------------------

    def set_meta(self, key: str, acl: Any, replication_factor: int | None) -> None:
        with self.lock:
            folder, meta = self._blob(key), self.meta(key)
            meta.acl, meta.replication_factor = check_acl(acl), replication_factor
            self._write_meta(folder, meta)

    def set_replication(self, key: str, replication_factor: int | None) -> None:
        with self.lock:
            folder, meta = self._blob(key), self.meta(key)
            meta.replication_factor = replication_factor
            self._write_meta(folder, meta)

    def begin_download(self, key: str) -> tuple[str, int, int]:
        """(session, version, size)."""
        with self.lock:
            self._expire()
            if len(self.downloads) >= MAX_DOWNLOADS:
                msg = (f"{MAX_DOWNLOADS} blob downloads are under way; finish one, or wait "
                       f"{SESSION_IDLE_SECS:g}s for an idle one to be given up")
                raise BlobError(msg)
            fd, info = self._open(key)
            os.close(fd)
            version = self.meta(key).version
            session = str(uuid.uuid4())
            self.downloads[session] = Download(key, version, info.st_ino)
            return session, version, info.st_size

    def read(self, session: str) -> bytes:
        """The next chunk; empty at the end (and the session is over)."""
        with self.lock:
            download = self.downloads.get(session)
            if download is None:
                msg = f"Blob for session {session} does not exist (or timed out)"
                raise BlobError(msg)
            fd, info = self._open(download.key)
            try:
                if info.st_ino != download.inode:
                    del self.downloads[session]
                    msg = f"{download.key}: the blob changed during its download; start again"
                    raise BlobError(msg)
                chunk = os.pread(fd, DOWNLOAD_CHUNK, download.offset)
            finally:
                os.close(fd)
            download.offset += len(chunk)
            download.last = time.monotonic()
            if not chunk:
                del self.downloads[session]
            return chunk

    def copy(self, key: str, target: Path) -> None:
        """The blob's data into a new file `target` (owner-only)."""
        fd, _ = self._open(key)
        with os.fdopen(fd, "rb") as src:
            out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            with os.fdopen(out, "wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)

    def delete(self, key: str) -> None:
        with self.lock:
            shutil.rmtree(self._blob(key))

    def list_page(self, after: str) -> tuple[list[str], str]:
        """Keys after `after` ("" from the start), LIST_PAGE at most, and the session to
        ask with for the next page (empty keys: the end)."""
        keys = [k for k in self.keys() if k > after][:LIST_PAGE]
        return keys, keys[-1] if keys else after

    def _expire(self) -> None:
        idle = time.monotonic() - SESSION_IDLE_SECS
        for session, upload in list(self.uploads.items()):
            if upload.last < idle:
                self.cancel(session)
        for session, download in list(self.downloads.items()):
            if download.last < idle:
                del self.downloads[session]
