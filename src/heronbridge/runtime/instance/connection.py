"""A task's framed connection to its stream manager, driven from the task's own thread.

The instance is single-threaded, as Heron's Python instance is: on a 2-core host a
network thread beside the component only adds GIL hand-offs. Output is bounded: the
loops stop producing while more than the high watermark is unsent.
"""

from __future__ import annotations

import select
import socket
from collections import deque

from ..errors import ProtocolError
from ..wire import auth
from ..wire.frames import BadFrame, FrameAssembler

READ_SIZE = 256 << 10
_IN = select.POLLIN | select.POLLPRI | select.POLLHUP | select.POLLERR


class ConnectionLost(ProtocolError):
    """The stream manager closed the connection."""


class Connection:
    def __init__(self, sock: socket.socket, session: auth.Session | None = None) -> None:
        sock.setblocking(False)
        self.sock = sock
        self._poller = select.poll()
        self._poller.register(sock, _IN)
        self._writing = False
        self._out: deque[bytes | memoryview] = deque()
        self.out_bytes = 0
        session = session or auth.Session()
        self._frames = session.assembler or FrameAssembler()
        self._sealer = session.sealer  # on TCP: every write is one authenticated record
        self._bad: BadFrame | None = None  # the stream can no longer be framed
        self.ready_fds: list[int] = []  # watched descriptors found readable by the last poll
        self._watched: set[int] = set()

    @classmethod
    def connect(cls, expect: auth.Identity, secret: bytes) -> Connection:
        """Connect to the stream manager `expect` names and prove the topology's secret
        to it (wire.auth) before any frame."""
        kind, _, where = expect.address.partition(":")
        if kind == "unix":
            sock, address = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM), where
        else:
            host, _, port = where.rpartition(":")
            sock, address = socket.socket(socket.AF_INET, socket.SOCK_STREAM), (host, int(port))
        try:
            sock.connect(address)
            if kind != "unix":
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            session = auth.dial_sync(sock, secret, auth.TASK, expect)
        except BaseException:
            sock.close()
            raise
        return cls(sock, session)

    def watch(self, fd: int) -> None:
        """Also wake `poll` when `fd` is readable (its number goes to `ready_fds`)."""
        if fd not in self._watched:
            self._watched.add(fd)
            self._poller.register(fd, _IN)

    def unwatch(self, fd: int) -> None:
        if fd in self._watched:
            self._watched.discard(fd)
            self._poller.unregister(fd)

    def send(self, frames: list[bytes]) -> None:
        if self._sealer is not None and frames:
            frames = self._sealer.seal(frames)
        for frame in frames:
            self._out.append(frame)
            self.out_bytes += len(frame)
        self.write()

    def write(self) -> None:
        out = self._out
        while out:
            try:
                batch = list(out) if len(out) <= 64 else [out[i] for i in range(64)]
                sent = self.sock.sendmsg(batch)
            except (BlockingIOError, InterruptedError):
                break
            except OSError as exc:
                raise ConnectionLost(str(exc)) from exc
            self.out_bytes -= sent
            while sent:
                head = out[0]
                if len(head) <= sent:
                    sent -= len(head)
                    out.popleft()
                else:
                    out[0] = memoryview(head)[sent:]
                    sent = 0
        want = bool(out)
        if want != self._writing:
            self._writing = want
            self._poller.modify(self.sock, _IN | select.POLLOUT if want else _IN)

    def poll(self, timeout: float | None, read: bool = True) -> tuple[bytes, list]:
        """Wait up to `timeout` seconds; return (data, frames) read, frames as
        (kind, dest, start, end) offsets into data. With read=False only write."""
        if read and not self._watched:
            # A busy task finds data waiting: one recv, no poll, per turn of its loop.
            if self._out:
                self.write()
            data, found = self.read()
            if data or not timeout:
                self.ready_fds = []
                return data, found
        elif not read:
            self._poller.modify(self.sock, select.POLLOUT)
        try:
            events = self._poller.poll(None if timeout is None else max(0, int(timeout * 1000)))
        finally:
            if not read:
                self._poller.modify(self.sock, _IN | (select.POLLOUT if self._writing else 0))
        readable = False
        self.ready_fds = []
        sock = self.sock.fileno()
        for fd, ev in events:
            if fd != sock:
                self.ready_fds.append(fd)
                continue
            if ev & select.POLLOUT:
                self.write()
            if ev & (select.POLLERR | select.POLLHUP) and not ev & select.POLLIN:
                msg = "stream manager connection closed"
                raise ConnectionLost(msg)
            readable = read and bool(ev & _IN)
        if not readable:
            if read:
                self._check_framed()
            return b"", []
        return self.read()

    def read(self) -> tuple[bytes, list]:
        self._check_framed()
        try:
            chunk = self.sock.recv(READ_SIZE)
        except (BlockingIOError, InterruptedError):
            return b"", []
        except OSError as exc:
            raise ConnectionLost(str(exc)) from exc
        if not chunk:
            msg = "stream manager closed the connection"
            raise ConnectionLost(msg)
        try:
            return self._frames.feed(chunk)
        except BadFrame as exc:  # keep the whole frames before it; the next read gives up
            self._bad = exc
            return exc.data, exc.found

    def _check_framed(self) -> None:
        if self._bad is not None:
            msg = f"the stream manager sent a malformed frame ({self._bad})"
            raise ConnectionLost(msg)

    def drain(self, timeout: float) -> None:
        """Block until everything queued is written or `timeout` passes."""
        import time

        deadline = time.monotonic() + timeout
        while self._out and time.monotonic() < deadline:
            self.poll(min(0.1, deadline - time.monotonic()), read=False)

    def close(self) -> None:
        self.sock.close()
