"""Every connection proves the topology's secret before its first frame.

A mutual challenge-response on HMAC-SHA256, run by every listener and every dialer
(the byte-level spec, with test vectors, is PROTOCOL.md beside this file):

    dialer   -> listener  MAGIC, role, dialer nonce, the listener identity it dialled
    listener -> dialer    MAGIC, listener nonce, proof("listener")
    dialer   -> listener  proof("dialer")
    listener -> dialer    OK

Each proof is an HMAC of the secret over the whole transcript: the dialer's role, the
identity of the listener it meant to reach (topology id, listener name, the address it
dialled) and both nonces. Each side proves it holds the secret over a nonce the other
chose, so neither a replay nor a reflection passes, and a proof made for one listener is
worth nothing at another: a process that took a dead stream manager's port and relays
the handshake to a live one fails it at both ends. The role says who dials (a task, a
stream manager, a metrics manager, the command line) and each listener accepts only its
own. On Unix sockets the peer's uid (SO_PEERCRED) must also be ours: the kernel then
vouches for every byte. On TCP the handshake also yields a key per direction, and every
frame after it travels in records that carry an HMAC and a sequence number
(wire.sealing). A listener reads no frame, and so unpickles nothing, before the dialer
has proved the secret.
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
from dataclasses import dataclass
from typing import Any

from ..errors import ProtocolError
from .sealing import SealedAssembler, Sealer, derive

log = logging.getLogger("heronbridge.runtime.auth")

MAGIC = b"HBA2"
NONCE = 32
MAC = hashlib.sha256().digest_size
OK = b"\x01"
HANDSHAKE_SECS = 5.0
MAX_HANDSHAKE = 1024  # bytes a listener buffers before the dialer has proved itself
SECRET_FD_ENV = "HERONBRIDGE_SECRET_FD"
KEY = 32  # bytes of the topology's secret (and of its checkpoint key)

TASK = "task"
STMGR = "stmgr"
METRICS = "metrics"
CLI = "cli"
GROUPING = "grouping"  # a task's JVM of Java custom groupings, dialling the task

_CHALLENGE = len(MAGIC) + NONCE + MAC


class AuthError(ProtocolError):
    """A peer did not prove the topology's secret (or we could not prove it to it)."""


@dataclass(frozen=True)
class Identity:
    """Whom a dialer means to reach: a topology's listener by name, at an address
    (`tcp:HOST:PORT` as published, or `unix:PATH`)."""

    topology: str
    name: str
    address: str

    @classmethod
    def tcp(cls, topology: str, name: str, host: str, port: int) -> Identity:
        return cls(topology, name, f"tcp:{host}:{port}")

    @classmethod
    def unix(cls, topology: str, name: str, path: str) -> Identity:
        return cls(topology, name, f"unix:{path}")

    @property
    def sealed(self) -> bool:
        """Frames travel in authenticated records (TCP); a Unix socket's peer is vouched
        for by the kernel."""
        return self.address.startswith("tcp:")

    def encode(self) -> bytes:
        return b"".join(_field(part.encode()) for part in (self.topology, self.name,
                                                             self.address))

    def __str__(self) -> str:
        return f"{self.name} of {self.topology} at {self.address}"


def _field(raw: bytes) -> bytes:
    return len(raw).to_bytes(2, "little") + raw


def transcript(role: str, identity: bytes, dialer_nonce: bytes, listener_nonce: bytes) -> bytes:
    return MAGIC + _field(role.encode()) + _field(identity) + dialer_nonce + listener_nonce


def proof(secret: bytes, side: bytes, transcript: bytes) -> bytes:
    return hmac.digest(secret, _field(side) + transcript, "sha256")


@dataclass
class Session:
    """An authenticated connection's keys: `sealer` for what we send, `assembler` for
    what we read (both None on a Unix socket, whose frames need no tags)."""

    sealer: Sealer | None = None
    assembler: SealedAssembler | None = None

    @classmethod
    def of(cls, secret: bytes, transcript: bytes, sealed: bool, dialer: bool) -> Session:
        if not sealed:
            return cls()
        to_listener, to_dialer = derive(secret, transcript)
        send, receive = (to_listener, to_dialer) if dialer else (to_dialer, to_listener)
        return cls(Sealer(send), SealedAssembler(receive))


def inherited_keys() -> tuple[bytes, bytes | None]:
    """(the topology's secret, its checkpoint key or None), which a process's parent
    handed it through an inherited pipe (never the environment or the command line,
    which /proc shows for the process's whole life); the pipe is closed once read, so
    nothing the process starts inherits it."""
    text = os.environ.pop(SECRET_FD_ENV, "")
    keys = b""
    if text.isdigit():
        try:
            with os.fdopen(int(text), "rb") as pipe:
                keys = pipe.read(2 * KEY + 1)
        except OSError:
            keys = b""
    if len(keys) not in (KEY, 2 * KEY):
        msg = (f"expected the topology's secret on the inherited descriptor "
               f"${SECRET_FD_ENV} ({text or 'unset'}), received {len(keys)} bytes")
        raise AuthError(msg)
    return keys[:KEY], keys[KEY:] or None


def inherited_secret() -> bytes:
    return inherited_keys()[0]


def secret_pipe(secret: bytes, checkpoint_key: bytes | None = None) -> tuple[int, dict[str, str]]:
    """(descriptor, environment) to start one child with: pass the descriptor to it
    (pass_fds) and close it here once the child started."""
    read, write = os.pipe()
    try:
        os.write(write, secret + (checkpoint_key or b""))  # far below a pipe's buffer
    finally:
        os.close(write)
    return read, {SECRET_FD_ENV: str(read)}


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


def _hello(role: str, nonce: bytes, identity: Identity) -> bytes:
    raw = role.encode()
    return MAGIC + bytes((len(raw),)) + raw + nonce + _field(identity.encode())


def _parse_hello(buf: bytes) -> tuple[str, bytes, bytes, int] | None:
    """(role, nonce, listener identity, bytes used), or None while incomplete."""
    if buf[:len(MAGIC)] != MAGIC[:len(buf)]:
        msg = f"expected a handshake, received {bytes(buf[:16])!r}"
        raise AuthError(msg)
    if len(buf) <= len(MAGIC):
        return None
    size = buf[len(MAGIC)]
    at = len(MAGIC) + 1 + size + NONCE
    if len(buf) < at + 2:
        return None
    end = at + 2 + int.from_bytes(buf[at:at + 2], "little")
    if len(buf) < end:
        return None
    role = bytes(buf[len(MAGIC) + 1:len(MAGIC) + 1 + size]).decode(errors="replace")
    return role, bytes(buf[at - NONCE:at]), bytes(buf[at + 2:end]), end


def _check_challenge(secret: bytes, role: str, nonce: bytes, identity: Identity,
                     data: bytes) -> tuple[bytes, bytes]:
    """(the dialer's reply, the transcript), once the listener's proof holds."""
    if data[:len(MAGIC)] != MAGIC:
        msg = f"expected a handshake reply, received {data[:16]!r}"
        raise AuthError(msg)
    said = transcript(role, identity.encode(), nonce, data[len(MAGIC):len(MAGIC) + NONCE])
    if not hmac.compare_digest(data[len(MAGIC) + NONCE:_CHALLENGE],
                               proof(secret, b"listener", said)):
        msg = (f"the listener did not prove the topology's secret for {identity} (it is "
               "not this topology's, not that listener, or not at that address)")
        raise AuthError(msg)
    return proof(secret, b"dialer", said), said


def _answer_hello(parsed: tuple[str, bytes, bytes, int], roles: set[str] | frozenset[str],
                  ours: Identity | None, secret: bytes) -> tuple[str, bytes, bool, bytes]:
    """The listener's checks of a dialer's hello, then its challenge: (role, transcript,
    whether the link is sealed, the reply to send); raises AuthError for a role or an
    identity it does not serve."""
    role, theirs, identity, _used = parsed
    if role not in roles:
        msg = f"expected a dialer among {sorted(roles)}, received {role!r}"
        raise AuthError(msg)
    if ours is None or identity != ours.encode():
        msg = f"expected a dialer of {ours}, received one for {_describe(identity)}"
        raise AuthError(msg)
    nonce = secrets.token_bytes(NONCE)
    said = transcript(role, identity, theirs, nonce)
    return role, said, ours.sealed, MAGIC + nonce + proof(secret, b"listener", said)


def _check_dialer_proof(secret: bytes, answer: bytes, said: bytes) -> None:
    if not hmac.compare_digest(answer, proof(secret, b"dialer", said)):
        msg = "wrong proof of the topology's secret"
        raise AuthError(msg)


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


class SealingTransport:
    """An asyncio transport whose writes go out as authenticated records; everything
    else is the transport's own. What is written during one turn of the event loop (a
    stream manager routing the reads of several tasks) goes out as one record: one tag
    per batch of batches."""

    def __init__(self, transport: Any, sealer: Sealer) -> None:
        self._transport = transport
        self._sealer = sealer
        self._pending: list[Any] = []

    def write(self, data: Any) -> None:
        self.writelines((data,))

    def writelines(self, chunks: Any) -> None:
        if not self._pending:
            asyncio.get_running_loop().call_soon(self._flush)
        self._pending.extend(chunks)

    def _flush(self) -> None:
        pending, self._pending = self._pending, []
        if pending and not self._transport.is_closing():
            self._transport.writelines(self._sealer.seal(pending))

    def get_write_buffer_size(self) -> int:
        return self._transport.get_write_buffer_size() + sum(map(len, self._pending))

    def close(self) -> None:
        self._flush()
        self._transport.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


def _hand_over(transport: Any, protocol: Any, role: str, session: Session,
               rest: bytes) -> Any:
    """Give the connection to the real protocol; returns the transport it writes to."""
    protocol.role = role
    transport.set_protocol(protocol)
    if session.sealer is not None:
        protocol._assembler = session.assembler  # noqa: SLF001 - FramedProtocol's reader
        transport = SealingTransport(transport, session.sealer)
    protocol.connection_made(transport)
    if rest:
        protocol.data_received(rest)
    return transport


# -- asyncio ------------------------------------------------------------------------


class _Listening(asyncio.Protocol):
    """The listener's side of one connection, until the dialer has proved the secret."""

    def __init__(self, listener: Listener) -> None:
        self.listener = listener
        self.buf = b""
        self.hello: tuple[str, bytes, bool] | None = None  # role, transcript, sealed
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
        listener = self.listener
        try:
            if len(self.buf) > MAX_HANDSHAKE:
                msg = f"expected a handshake, received {len(self.buf)} bytes of something else"
                raise AuthError(msg)
            if self.hello is None:
                parsed = _parse_hello(self.buf)
                if parsed is None:
                    return
                role, said, sealed, reply = _answer_hello(parsed, listener.roles,
                                                          listener.identity, listener.secret)
                self.hello = (role, said, sealed)
                self.buf = self.buf[parsed[3]:]
                self.transport.write(reply)
            if len(self.buf) < MAC:
                return
            role, said, sealed = self.hello
            _check_dialer_proof(listener.secret, self.buf[:MAC], said)
        except AuthError as exc:
            self._refuse(str(exc))
            return
        if self.timer is not None:
            self.timer.cancel()
        self.transport.write(OK)
        session = Session.of(listener.secret, said, sealed, dialer=False)
        _hand_over(self.transport, listener.factory(), role, session, self.buf[MAC:])

    def _refuse(self, reason: str) -> None:
        log.warning("%s: refused a connection from %s: %s", self.listener.name, self.peer,
                    reason)
        if self.timer is not None:
            self.timer.cancel()
        self.transport.abort()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.timer is not None:
            self.timer.cancel()


def _describe(identity: bytes) -> str:
    parts: list[str] = []
    pos = 0
    while pos + 2 <= len(identity) and len(parts) < 3:
        size = int.from_bytes(identity[pos:pos + 2], "little")
        parts.append(identity[pos + 2:pos + 2 + size].decode(errors="replace"))
        pos += 2 + size
    if len(parts) != 3 or pos != len(identity):
        return repr(identity[:64])
    return str(Identity(*parts))


class Listener:
    """A protocol factory for `create_server`/`create_unix_server`: each connection gets
    `factory()` (its `role` attribute set) only once its dialer has proved the secret for
    this listener's `identity`, which a TCP listener sets once it knows its port (until
    then every dialer is refused)."""

    def __init__(self, factory: Callable[[], Any], secret: bytes, roles: frozenset[str],
                 name: str, identity: Identity | None = None) -> None:
        self.factory, self.secret, self.roles, self.name = factory, secret, roles, name
        self.identity = identity

    def __call__(self) -> asyncio.Protocol:
        return _Listening(self)


def listen(factory: Callable[[], Any], secret: bytes, roles: set[str] | frozenset[str],
           name: str, identity: Identity | None = None) -> Listener:
    return Listener(factory, secret, frozenset(roles), name, identity)


class _Dialing(asyncio.Protocol):
    def __init__(self, factory: Callable[[], Any], secret: bytes, role: str,
                 identity: Identity) -> None:
        self.factory, self.secret, self.role, self.identity = factory, secret, role, identity
        self.nonce = secrets.token_bytes(NONCE)
        self.buf = b""
        self.said: bytes | None = None
        self.done: asyncio.Future = asyncio.get_running_loop().create_future()
        self.transport: Any = None

    def connection_made(self, transport: Any) -> None:
        self.transport = transport
        try:
            _check_uid(transport.get_extra_info("socket"))
        except (AuthError, OSError) as exc:
            self._fail(AuthError(f"refusing the listener: {exc}"))
            return
        transport.write(_hello(self.role, self.nonce, self.identity))

    def data_received(self, data: bytes) -> None:
        self.buf += data
        if self.said is None:
            if len(self.buf) < _CHALLENGE:
                return
            try:
                reply, self.said = _check_challenge(self.secret, self.role, self.nonce,
                                                    self.identity, self.buf[:_CHALLENGE])
            except AuthError as exc:
                self._fail(exc)
                return
            self.transport.write(reply)
            self.buf = self.buf[_CHALLENGE:]
        if self.buf and not self.done.done():
            if self.buf[:len(OK)] != OK:
                self._fail(AuthError("the listener did not accept our proof"))
                return
            session = Session.of(self.secret, self.said, self.identity.sealed, dialer=True)
            protocol = self.factory()
            transport = _hand_over(self.transport, protocol, self.role, session,
                                   self.buf[len(OK):])
            self.done.set_result((transport, protocol))

    def _fail(self, exc: AuthError) -> None:
        if not self.done.done():
            self.done.set_exception(exc)
        self.transport.abort()

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done.done():
            self.done.set_exception(AuthError(
                "the listener closed the connection during the handshake (it refused our "
                "proof, or it is not this topology's)"))


async def dial(factory: Callable[[], Any], secret: bytes, role: str, expect: Identity, *,
               ssl_context: ssl.SSLContext | None = None) -> tuple[Any, Any]:
    """Connect to the listener `expect` names (TCP to its host:port, over TLS when given
    a context, or its Unix socket), prove the secret as `role` for that listener, and
    return (transport, factory()) ready for frames. Raises OSError when nothing listens,
    AuthError when the handshake fails."""
    loop = asyncio.get_running_loop()
    dialing = _Dialing(factory, secret, role, expect)
    # Read the outcome even if nobody waits for it any more (after a timeout).
    dialing.done.add_done_callback(lambda f: f.cancelled() or f.exception())
    kind, _, where = expect.address.partition(":")
    if kind == "unix":
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.setblocking(False)
        try:
            # uvloop cannot dial abstract names itself: connect the socket, then hand it.
            await loop.sock_connect(sock, where)
        except OSError:
            sock.close()
            raise
        transport, _ = await loop.create_unix_connection(lambda: dialing, sock=sock)
    else:
        host, _, port = where.rpartition(":")
        transport, _ = await loop.create_connection(lambda: dialing, host.strip("[]"),
                                                    int(port), ssl=ssl_context)
    try:
        return await asyncio.wait_for(asyncio.shield(dialing.done), HANDSHAKE_SECS)
    except TimeoutError as exc:
        transport.abort()
        msg = f"no handshake reply within {HANDSHAKE_SECS:g}s"
        raise AuthError(msg) from exc


# -- blocking sockets ---------------------------------------------------------------


def dial_sync(sock: socket.socket, secret: bytes, role: str, expect: Identity,
              timeout: float = HANDSHAKE_SECS) -> Session:
    """Prove the secret on a connected blocking socket (the task's and the command
    line's side) to the listener `expect` names; raises AuthError if either side's proof
    fails. Returns the session whose sealer and assembler a TCP link's frames go
    through."""
    _check_uid(sock)
    nonce = secrets.token_bytes(NONCE)
    deadline = time.monotonic() + timeout
    old = sock.gettimeout()
    try:
        sock.sendall(_hello(role, nonce, expect))
        reply, said = _check_challenge(secret, role, nonce, expect,
                                       _exactly(sock, _CHALLENGE, deadline))
        sock.sendall(reply)
        if _exactly(sock, len(OK), deadline) != OK:
            msg = "the listener did not accept our proof"
            raise AuthError(msg)
    finally:
        sock.settimeout(old)
    return Session.of(secret, said, expect.sealed, dialer=True)


def accept_sync(sock: socket.socket, secret: bytes, roles: frozenset[str], identity: Identity,
                timeout: float = HANDSHAKE_SECS) -> tuple[str, Session]:
    """The listener's side of the handshake on an accepted blocking socket: the dialer
    proves the secret for `identity` as one of `roles` before anything else is read.
    Returns (role, session); raises AuthError (the caller closes the socket)."""
    _check_uid(sock)
    deadline = time.monotonic() + timeout
    old = sock.gettimeout()
    try:
        buf = b""
        parsed = None
        while parsed is None:
            if len(buf) > MAX_HANDSHAKE:
                msg = f"expected a handshake, received {len(buf)} bytes of something else"
                raise AuthError(msg)
            buf += _some(sock, deadline)
            parsed = _parse_hello(buf)
        role, said, _sealed, reply = _answer_hello(parsed, roles, identity, secret)
        sock.sendall(reply)
        answer = buf[parsed[3]:]
        while len(answer) < MAC:
            answer += _some(sock, deadline)
        if len(answer) > MAC:
            msg = "expected the dialer's proof alone, received more before it was accepted"
            raise AuthError(msg)
        _check_dialer_proof(secret, answer, said)
        sock.sendall(OK)
    finally:
        sock.settimeout(old)
    return role, Session.of(secret, said, identity.sealed, dialer=False)


def _some(sock: socket.socket, deadline: float) -> bytes:
    """What one read brings before `deadline`: the dialer's handshake, in pieces."""
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            msg = f"no handshake within {HANDSHAKE_SECS:g}s"
            raise AuthError(msg)
        sock.settimeout(remaining)
        try:
            chunk = sock.recv(MAX_HANDSHAKE)
        except TimeoutError:
            continue
        if not chunk:
            msg = "the dialer closed the connection during the handshake"
            raise AuthError(msg)
        return chunk


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
