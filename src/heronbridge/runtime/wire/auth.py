"""Every connection proves the topology's secret before its first frame.

A mutual challenge-response on HMAC-SHA256, run by every listener and every dialer:

    dialer   -> listener  MAGIC, role, dialer nonce (32 bytes)
    listener -> dialer    MAGIC, listener nonce, HMAC(secret, "listener", role, nonces)
    dialer   -> listener  HMAC(secret, "dialer", role, nonces)
    listener -> dialer    OK

Each side proves it holds the secret over a nonce the other chose, so neither a replay
nor a reflection passes; the role says who dials (a task, a stream manager, a metrics
manager, the command line) and each listener accepts only its own. On Unix sockets the
peer's uid (SO_PEERCRED) must also be ours. A listener reads no frame, and so
unpickles nothing, before the dialer has proved the secret; then the asyncio transport
is handed to the real protocol, and the data path runs exactly as without this.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import logging
import os
import secrets
import socket
import ssl
import struct
import time
from collections.abc import Callable
from typing import Any

from ..errors import ProtocolError

log = logging.getLogger("heronbridge.runtime.auth")

MAGIC = b"HBA1"
NONCE = 32
MAC = hashlib.sha256().digest_size
OK = b"\x01"
HANDSHAKE_SECS = 5.0
MAX_HANDSHAKE = 1024  # bytes a listener buffers before the dialer has proved itself
SECRET_ENV = "HERONBRIDGE_TOPOLOGY_SECRET"

TASK = "task"
STMGR = "stmgr"
METRICS = "metrics"
CLI = "cli"

_CHALLENGE = len(MAGIC) + NONCE + MAC


class AuthError(ProtocolError):
    """A peer did not prove the topology's secret (or we could not prove it to it)."""


def proof(secret: bytes, side: bytes, role: str, dialer_nonce: bytes,
          listener_nonce: bytes) -> bytes:
    message = b"\0".join((side, role.encode(), dialer_nonce, listener_nonce))
    return hmac.new(secret, message, hashlib.sha256).digest()


def secret_from_env() -> bytes:
    """The secret a process's parent handed it, removed from the environment so that
    nothing it starts (a component's subprocess) inherits it."""
    text = os.environ.pop(SECRET_ENV, "")
    try:
        secret = bytes.fromhex(text)
    except ValueError:
        secret = b""
    if len(secret) < 16:
        msg = f"expected the topology's secret in ${SECRET_ENV} (hex), received none"
        raise AuthError(msg)
    return secret


def secret_env(secret: bytes) -> dict[str, str]:
    return {SECRET_ENV: secret.hex()}


def peer_uid(sock: Any) -> int | None:
    """The uid of a Unix socket's peer; None for other sockets."""
    if sock is None or sock.family != socket.AF_UNIX:
        return None
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", creds)[1]


def _check_uid(sock: Any) -> None:
    uid = peer_uid(sock)
    if uid is not None and uid != os.getuid():
        msg = f"expected a peer of uid {os.getuid()}, received uid {uid}"
        raise AuthError(msg)


def _hello(role: str, nonce: bytes) -> bytes:
    raw = role.encode()
    return MAGIC + bytes((len(raw),)) + raw + nonce


def _parse_hello(buf: bytes) -> tuple[str, bytes, int] | None:
    """(role, nonce, bytes used), or None while incomplete."""
    if buf[:len(MAGIC)] != MAGIC[:len(buf)]:
        msg = f"expected a handshake, received {bytes(buf[:16])!r}"
        raise AuthError(msg)
    if len(buf) <= len(MAGIC):
        return None
    size = buf[len(MAGIC)]
    end = len(MAGIC) + 1 + size + NONCE
    if len(buf) < end:
        return None
    role = bytes(buf[len(MAGIC) + 1:len(MAGIC) + 1 + size]).decode(errors="replace")
    return role, bytes(buf[end - NONCE:end]), end


def _check_challenge(secret: bytes, role: str, nonce: bytes, data: bytes) -> bytes:
    """The dialer's reply to a listener's challenge, once the listener's proof holds."""
    if data[:len(MAGIC)] != MAGIC:
        msg = f"expected a handshake reply, received {data[:16]!r}"
        raise AuthError(msg)
    theirs = data[len(MAGIC):len(MAGIC) + NONCE]
    if not hmac.compare_digest(data[len(MAGIC) + NONCE:_CHALLENGE],
                               proof(secret, b"listener", role, nonce, theirs)):
        msg = "the listener did not prove the topology's secret"
        raise AuthError(msg)
    return proof(secret, b"dialer", role, nonce, theirs)


def describe_peer(transport: Any) -> str:
    """Who is at the other end of a transport: pid and uid on a Unix socket, else the
    address."""
    sock = transport.get_extra_info("socket")
    if sock is not None and sock.family == socket.AF_UNIX:
        pid, uid, _ = struct.unpack("3i", sock.getsockopt(
            socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
        return f"pid {pid} (uid {uid})"
    peer = transport.get_extra_info("peername")
    return f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else str(peer)


def _hand_over(transport: Any, protocol: Any, role: str, rest: bytes) -> None:
    protocol.role = role
    transport.set_protocol(protocol)
    protocol.connection_made(transport)
    if rest:
        protocol.data_received(rest)


# -- asyncio ------------------------------------------------------------------------


class _Listening(asyncio.Protocol):
    """The listener's side of one connection, until the dialer has proved the secret."""

    def __init__(self, factory: Callable[[], Any], secret: bytes, roles: frozenset[str],
                 name: str) -> None:
        self.factory, self.secret, self.roles, self.name = factory, secret, roles, name
        self.buf = b""
        self.hello: tuple[str, bytes, bytes] | None = None  # role, their nonce, ours
        self.transport: Any = None
        self.timer: asyncio.TimerHandle | None = None
        self.peer = "?"

    def connection_made(self, transport: Any) -> None:
        self.transport = transport
        try:
            self.peer = describe_peer(transport)
            _check_uid(transport.get_extra_info("socket"))
        except (AuthError, OSError) as exc:
            self._refuse(str(exc))
            return
        self.timer = asyncio.get_running_loop().call_later(
            HANDSHAKE_SECS, self._refuse, f"no handshake within {HANDSHAKE_SECS:g}s")

    def data_received(self, data: bytes) -> None:
        self.buf += data
        try:
            if len(self.buf) > MAX_HANDSHAKE:
                msg = f"expected a handshake, received {len(self.buf)} bytes of something else"
                raise AuthError(msg)
            if self.hello is None:
                parsed = _parse_hello(self.buf)
                if parsed is None:
                    return
                role, theirs, used = parsed
                if role not in self.roles:
                    msg = f"expected a dialer among {sorted(self.roles)}, received {role!r}"
                    raise AuthError(msg)
                ours = secrets.token_bytes(NONCE)
                self.hello = (role, theirs, ours)
                self.buf = self.buf[used:]
                self.transport.write(MAGIC + ours + proof(self.secret, b"listener", role,
                                                          theirs, ours))
            if len(self.buf) < MAC:
                return
            role, theirs, ours = self.hello
            if not hmac.compare_digest(self.buf[:MAC],
                                       proof(self.secret, b"dialer", role, theirs, ours)):
                msg = "wrong proof of the topology's secret"
                raise AuthError(msg)
        except AuthError as exc:
            self._refuse(str(exc))
            return
        self.timer.cancel()
        self.transport.write(OK)
        _hand_over(self.transport, self.factory(), role, self.buf[MAC:])

    def _refuse(self, reason: str) -> None:
        log.warning("%s: refused a connection from %s: %s", self.name, self.peer, reason)
        if self.timer is not None:
            self.timer.cancel()
        self.transport.abort()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.timer is not None:
            self.timer.cancel()


def listen(factory: Callable[[], Any], secret: bytes, roles: set[str] | frozenset[str],
           name: str) -> Callable[[], asyncio.Protocol]:
    """A protocol factory for `create_server`/`create_unix_server`: each connection gets
    `factory()` (its `role` attribute set) only once its dialer has proved the secret."""
    roles = frozenset(roles)
    return lambda: _Listening(factory, secret, roles, name)


class _Dialing(asyncio.Protocol):
    def __init__(self, factory: Callable[[], Any], secret: bytes, role: str) -> None:
        self.factory, self.secret, self.role = factory, secret, role
        self.nonce = secrets.token_bytes(NONCE)
        self.buf = b""
        self.replied = False
        self.done: asyncio.Future = asyncio.get_running_loop().create_future()
        self.transport: Any = None

    def connection_made(self, transport: Any) -> None:
        self.transport = transport
        try:
            _check_uid(transport.get_extra_info("socket"))
        except (AuthError, OSError) as exc:
            self._fail(AuthError(f"refusing the listener: {exc}"))
            return
        transport.write(_hello(self.role, self.nonce))

    def data_received(self, data: bytes) -> None:
        self.buf += data
        if not self.replied:
            if len(self.buf) < _CHALLENGE:
                return
            try:
                reply = _check_challenge(self.secret, self.role, self.nonce,
                                         self.buf[:_CHALLENGE])
            except AuthError as exc:
                self._fail(exc)
                return
            self.transport.write(reply)
            self.replied = True
            self.buf = self.buf[_CHALLENGE:]
        if self.buf and not self.done.done():
            if self.buf[:len(OK)] != OK:
                self._fail(AuthError("the listener did not accept our proof"))
                return
            protocol = self.factory()
            _hand_over(self.transport, protocol, self.role, self.buf[len(OK):])
            self.done.set_result(protocol)

    def _fail(self, exc: AuthError) -> None:
        if not self.done.done():
            self.done.set_exception(exc)
        self.transport.abort()

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done.done():
            self.done.set_exception(AuthError(
                "the listener closed the connection during the handshake (it refused our "
                "proof, or it is not this topology's)"))


async def dial(factory: Callable[[], Any], secret: bytes, role: str, *,
               host: str | None = None, port: int | None = None, path: str | None = None,
               ssl_context: ssl.SSLContext | None = None) -> tuple[Any, Any]:
    """Connect (TCP to host:port, optionally over TLS, or to the Unix socket `path`),
    prove the secret as `role`, and return (transport, factory()) ready for frames.
    Raises OSError when nothing listens, AuthError when the handshake fails."""
    loop = asyncio.get_running_loop()
    dialing = _Dialing(factory, secret, role)
    # Read the outcome even if nobody waits for it any more (after a timeout).
    dialing.done.add_done_callback(lambda f: f.cancelled() or f.exception())
    if path is not None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.setblocking(False)
        try:
            # uvloop cannot dial abstract names itself: connect the socket, then hand it.
            await loop.sock_connect(sock, path)
        except OSError:
            sock.close()
            raise
        transport, _ = await loop.create_unix_connection(lambda: dialing, sock=sock)
    else:
        transport, _ = await loop.create_connection(lambda: dialing, host, port,
                                                    ssl=ssl_context)
    try:
        protocol = await asyncio.wait_for(asyncio.shield(dialing.done), HANDSHAKE_SECS)
    except TimeoutError as exc:
        transport.abort()
        msg = f"no handshake reply within {HANDSHAKE_SECS:g}s"
        raise AuthError(msg) from exc
    return transport, protocol


# -- blocking sockets ---------------------------------------------------------------


def dial_sync(sock: socket.socket, secret: bytes, role: str,
              timeout: float = HANDSHAKE_SECS) -> None:
    """Prove the secret on a connected blocking socket (the task's and the command
    line's side); raises AuthError if either side's proof fails."""
    _check_uid(sock)
    nonce = secrets.token_bytes(NONCE)
    deadline = time.monotonic() + timeout
    old = sock.gettimeout()
    try:
        sock.sendall(_hello(role, nonce))
        sock.sendall(_check_challenge(secret, role, nonce, _exactly(sock, _CHALLENGE,
                                                                    deadline)))
        if _exactly(sock, len(OK), deadline) != OK:
            msg = "the listener did not accept our proof"
            raise AuthError(msg)
    finally:
        sock.settimeout(old)


def _exactly(sock: socket.socket, size: int, deadline: float) -> bytes:
    parts, got = [], 0
    while got < size:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            msg = "no handshake reply in time"
            raise AuthError(msg)
        sock.settimeout(remaining)
        try:
            chunk = sock.recv(size - got)
        except TimeoutError:
            continue
        if not chunk:
            msg = ("the listener closed the connection during the handshake (it refused our "
                   "proof, or it is not this topology's)")
            raise AuthError(msg)
        parts.append(chunk)
        got += len(chunk)
    return b"".join(parts)
