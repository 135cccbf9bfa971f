"""State manager on ZooKeeper (kazoo), for topologies whose containers run on many hosts.

The layout is the local one's, under a root: `zk://HOST:PORT[,HOST:PORT...]/ROOT`.
The topology master's and the scheduler's locations are ephemeral nodes, gone when
their process's session ends; a second master finds the node taken (NodeExistsError:
another primary). After a session is lost, this client re-creates the ephemeral nodes it
held. Every node is written under a digest identity (`user:password`): the owner may do
anything, the world may only read; the topology's secret is the owner's only. A root or
folder found already there is used only if that identity alone may change it.

Every call has a deadline (`patience`, and `hurry`'s): while the client is disconnected,
kazoo's own synchronous calls queue the request and wait for the connection to come back,
however long that takes, and its retry deadline is checked only between attempts.
"""

from __future__ import annotations

import atexit
import logging
import os
import random
import threading
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

from kazoo.client import KazooClient, KazooState
from kazoo.exceptions import (
    ConnectionClosedError,
    ConnectionLoss,
    KazooException,
    NoAuthError,
    NodeExistsError,
    NoNodeError,
    OperationTimeoutError,
    SessionExpiredError,
)
from kazoo.handlers.threading import KazooTimeoutError
from kazoo.recipe.watchers import DataWatch
from kazoo.retry import KazooRetry
from kazoo.security import Permissions, make_acl, make_digest_acl

from ..errors import StateManagerError
from . import base
from .base import EPHEMERAL, KINDS, OWNER_ONLY, ZK_DIGEST_ENV, StateManager, Watch

log = logging.getLogger("heronbridge.runtime.statemgr.zk")

SESSION_TIMEOUT_SECS = 10.0
_CHANGES = Permissions.WRITE | Permissions.CREATE | Permissions.DELETE | Permissions.ADMIN
CONNECT_TIMEOUT_SECS = 15.0
# What one call does again, after a pause, until its deadline: the connection dropped.
_AGAIN = (ConnectionLoss, OperationTimeoutError, SessionExpiredError)
RETRY_DELAY_SECS = 0.1
RETRY_MAX_DELAY_SECS = 1.0


def parse_uri(uri: str) -> tuple[str, str, dict[str, str]]:
    """`zk://h1:p1,h2:p2/root?session_timeout=10` -> (hosts, root, options)."""
    parts = urlsplit(uri)
    if parts.scheme != "zk" or not parts.netloc or parts.username or parts.password:
        msg = (f"expected a ZooKeeper state location zk://HOST:PORT[,HOST:PORT]/ROOT "
               f"(credentials go in ${ZK_DIGEST_ENV}, not the location), received {uri!r}")
        raise StateManagerError(msg)
    root = "/" + parts.path.strip("/") if parts.path.strip("/") else "/heronbridge"
    options = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    return parts.netloc, root, options


class ZooKeeperStateManager(StateManager):
    def __init__(self, uri: str, credential: str | None = None) -> None:
        hosts, self.root, options = parse_uri(uri)
        self.uri = uri
        self.hosts = hosts
        credential = credential or os.environ.get(ZK_DIGEST_ENV) or ""
        user, sep, password = credential.partition(":")
        if not sep or not user or not password:
            msg = (f"state {uri}: expected a ZooKeeper digest identity 'user:password' (in "
                   f"${ZK_DIGEST_ENV} or the heronbridge home), received none")
            raise StateManagerError(msg)
        self.credential = credential
        try:
            session = float(options.get("session_timeout", SESSION_TIMEOUT_SECS))
        except ValueError:
            session = -1.0
        if session <= 0:
            msg = (f"state {uri}: expected session_timeout in seconds > 0, received "
                   f"{options['session_timeout']!r}")
            raise StateManagerError(msg)
        self._session = session
        # How long one call may wait for an answer (retrying while the connection is
        # down) before it raises StateManagerError.
        self.patience = session
        self._own = make_digest_acl(user, password, all=True)
        self._shared = [self._own, make_acl("world", "anyone", read=True)]
        # Explicit retries: kazoo's default reconnect back-off grows to an hour. Its
        # command retry serves its recipes (DataWatch); our own calls go through _call.
        self.zk = KazooClient(
            hosts=hosts, timeout=session, auth_data=[("digest", credential)],
            default_acl=self._shared,
            connection_retry=KazooRetry(max_tries=-1, delay=0.1, backoff=2, max_delay=2.0,
                                        max_jitter=0.2),
            command_retry=KazooRetry(max_tries=-1, delay=0.1, backoff=2, max_delay=1.0,
                                     max_jitter=0.2, deadline=session))
        self._owned: dict[str, bytes] = {}  # ephemeral nodes this session holds
        self._lost = False
        self._away_since: float | None = None  # monotonic time the connection dropped
        # Set while connected: a call waits for it rather than queue its request in kazoo,
        # which would send it once connected again, after its caller has given up on it.
        self._up = threading.Event()
        self.zk.add_listener(self._state_changed)
        try:
            self.zk.start(timeout=CONNECT_TIMEOUT_SECS)
        except KazooTimeoutError as exc:
            self.zk.close()
            msg = f"state {uri}: cannot reach ZooKeeper at {hosts} within {CONNECT_TIMEOUT_SECS}s"
            raise StateManagerError(msg) from exc
        # Closed at exit before kazoo's own exit hook (hooks run last registered first),
        # which joins its callback thread and stops nothing: a watch's read queued while
        # disconnected would keep that thread, and so the process, waiting for ever.
        # Stopping the client first fails what is queued.
        self._closed = False
        atexit.register(self.close)
        for path in (self.root, *map(self._folder, KINDS)):  # checked before any use
            self._call("create the folder", path, "", self.zk.ensure_path_async, path)
            self._check_owned(path)

    # -- plumbing ---------------------------------------------------------------

    def _check_owned(self, path: str) -> None:
        """A node found there is used only when this identity alone may change it or
        what is under it (others may at most read): one another identity made open to
        all would let it replace our secret and our topologies."""
        acls = self._call("read the ACL of", path, "", self.zk.get_acls_async, path)[0]
        others = sorted({f"{a.id.scheme}:{a.id.id}" for a in acls
                         if a.perms & _CHANGES and a.id != self._own.id})
        mine = any(a.id == self._own.id and a.perms & _CHANGES == _CHANGES for a in acls)
        if others or not mine:
            who = f"{', '.join(others)} may change it" if others else \
                "this identity may not change it"
            msg = (f"state {self.uri}: the ZooKeeper node {path} exists and {who}; refusing "
                   "to use it (another identity made it: delete it, or choose another root)")
            raise StateManagerError(msg)

    def _folder(self, kind: str) -> str:
        return f"{self.root}/{kind}"

    def _path(self, kind: str, name: str) -> str:
        if kind not in KINDS or not name or "/" in name or name.startswith("."):
            msg = f"bad state node {kind}/{name}"
            raise StateManagerError(msg)
        return f"{self.root}/{kind}/{name}"

    def _call(self, what: str, kind: str, name: str, fn: Callable, *args: object,
              **kwargs: object) -> Any:  # kazoo's answers are untyped
        """`fn(*args, **kwargs)`, one of kazoo's *_async calls, answered within the
        patience (and before `hurry`'s deadline): made once connected, and again when the
        connection drops meanwhile; StateManagerError when no answer came in time."""
        began = time.monotonic()
        deadline = began + self.patience
        if self._until is not None:
            deadline = min(deadline, self._until)
        delay = RETRY_DELAY_SECS
        while True:
            if not self._up.wait(max(0.0, deadline - time.monotonic())):
                waited = time.monotonic() - began
                break
            try:
                return fn(*args, **kwargs).get(timeout=max(0.0, deadline - time.monotonic()))
            except (NoNodeError, NodeExistsError):
                raise
            except ConnectionClosedError as exc:  # closed here: nothing to wait for
                msg = f"state {self.uri}: cannot {what} {kind}/{name}: the client is closed"
                raise StateManagerError(msg) from exc
            except _AGAIN:
                pause = delay * random.uniform(0.8, 1.2)
                if time.monotonic() + pause < deadline:
                    time.sleep(pause)
                    delay = min(delay * 2, RETRY_MAX_DELAY_SECS)
                    continue
                waited = time.monotonic() - began
            except KazooTimeoutError:
                waited = time.monotonic() - began
            except NoAuthError as exc:
                msg = (f"state {self.uri}: not allowed to {what} {kind}/{name} (its ZooKeeper "
                       f"ACL is another identity's; run as the topology's owner or set "
                       f"${ZK_DIGEST_ENV})")
                raise StateManagerError(msg) from exc
            except KazooException as exc:
                msg = f"state {self.uri}: cannot {what} {kind}/{name}: {type(exc).__name__} {exc}"
                raise StateManagerError(msg) from exc
            break
        msg = (f"state {self.uri}: ZooKeeper at {self.hosts} did not answer within "
               f"{waited:.1f}s ({what} {kind}/{name}; {self._connection()})")
        raise StateManagerError(msg)

    def _connection(self) -> str:
        away = self.unreachable_secs()
        return f"disconnected for {away:.1f}s" if away else "connected"

    def unreachable_secs(self) -> float:
        since = self._away_since
        return 0.0 if since is None else time.monotonic() - since

    def _state_changed(self, state: str) -> None:
        # Runs on kazoo's connection thread: never block here.
        away = self._away_since
        if state == KazooState.CONNECTED:
            self._up.set()
            self._away_since = None
            if away is not None:
                log.info("state %s: ZooKeeper connection back after %.1fs", self.uri,
                         time.monotonic() - away)
        else:
            self._up.clear()
            if away is None:
                self._away_since = time.monotonic()
        if state == KazooState.LOST:
            self._lost = True
            log.warning("state %s: ZooKeeper session lost", self.uri)
        elif state == KazooState.SUSPENDED:
            log.warning("state %s: ZooKeeper connection suspended; retrying", self.uri)
        elif state == KazooState.CONNECTED and self._lost:
            self._lost = False
            self.zk.handler.spawn(self._restore)

    def _restore(self) -> None:
        """The server dropped our ephemeral nodes with the old session: put them back."""
        for path, data in list(self._owned.items()):
            kind, name = path.rsplit("/", 2)[-2:]
            try:
                self._create_ephemeral(path, data)
                log.warning("state %s: re-created %s/%s after the session was lost",
                            self.uri, kind, name)
            except (base.NodeExistsError, StateManagerError) as exc:
                self._owned.pop(path, None)
                log.error("state %s: could not re-create %s/%s: %s", self.uri, kind, name, exc)

    def _create_ephemeral(self, path: str, data: bytes) -> None:
        kind, name = path.rsplit("/", 2)[-2:]
        try:
            self._call("create", kind, name, self.zk.create_async, path, data,
                       ephemeral=True)
        except NodeExistsError:
            try:
                _, stat = self._call("read", kind, name, self.zk.get_async, path)
            except NoNodeError:  # its holder just went: try again
                return self._create_ephemeral(path, data)
            if stat.ephemeralOwner != self.zk.client_id[0]:
                msg = (f"state {self.uri}: {kind}/{name} is held by another process (ZooKeeper "
                       f"session {stat.ephemeralOwner:#x}): another primary")
                raise base.NodeExistsError(msg) from None
            self._call("write", kind, name, self.zk.set_async, path, data)
        self._owned[path] = data
        return None

    # -- the StateManager interface ---------------------------------------------

    def _read(self, kind: str, name: str) -> bytes | None:
        try:
            data, _ = self._call("read", kind, name, self.zk.get_async,
                                  self._path(kind, name))
        except NoNodeError:
            return None
        return data

    def _write(self, kind: str, name: str, data: bytes) -> None:
        path = self._path(kind, name)
        if kind in EPHEMERAL:
            self._create_ephemeral(path, data)
        elif kind in OWNER_ONLY:
            # Always a fresh node, so that it never keeps an ACL wider than its owner's.
            self.delete(kind, name)
            self._call("create", kind, name, self.zk.create_async, path, data,
                       acl=[self._own])
        else:
            try:
                self._call("write", kind, name, self.zk.set_async, path, data)
            except NoNodeError:
                try:
                    self._call("create", kind, name, self.zk.create_async, path, data)
                except NodeExistsError:  # created meanwhile: ours is the newer value
                    self._call("write", kind, name, self.zk.set_async, path, data)

    def _claim(self, kind: str, name: str, data: bytes) -> None:
        self._create_ephemeral(self._path(kind, name), data)

    def delete(self, kind: str, name: str) -> None:
        path = self._path(kind, name)
        self._owned.pop(path, None)
        try:
            self._call("delete", kind, name, self.zk.delete_async, path)
        except NoNodeError:
            pass

    def names(self, kind: str) -> list[str]:
        try:
            return sorted(self._call("list", kind, "*", self.zk.get_children_async,
                                     self._folder(kind)))
        except NoNodeError:
            return []

    def _watch(self, kind: str, name: str, changed: Callable[[bytes | None], None],
               watch: Watch) -> None:
        def fire(data: bytes | None, stat: object, *_: object) -> bool | None:
            if watch.cancelled:
                return False  # ends the DataWatch
            changed(data if stat is not None else None)
            return None

        DataWatch(self.zk, self._path(kind, name), fire)

    def child_env(self) -> dict[str, str]:
        return {ZK_DIGEST_ENV: self.credential}

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        atexit.unregister(self.close)
        self._owned.clear()
        self.zk.remove_listener(self._state_changed)  # closing reports LOST: not a loss
        try:
            self.zk.stop()
            self.zk.close()
        except KazooException:
            pass
