"""Framed connections for the asyncio-based daemons (stream manager, masters)."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
from collections.abc import Coroutine
from typing import Any

from google.protobuf.message import Message

from ..errors import SchedulerError
from .auth import describe_peer
from .frames import CONTROL, BadFrame, FrameAssembler, control_frame, parse_control

log = logging.getLogger("heronbridge.runtime.wire")


class FramedProtocol(asyncio.Protocol):
    """Splits the byte stream into frames and hands them to `frames_received`."""

    role: str | None = None  # who the peer proved to be (wire.auth), e.g. "stmgr"

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self._assembler = FrameAssembler()
        self.closed = asyncio.get_running_loop().create_future()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        if self.transport is None or self.transport.is_closing():
            return  # closed after a bad frame: what follows it cannot be framed
        bad = None
        try:
            data, found = self._assembler.feed(data)
        except BadFrame as exc:  # the whole frames before it still count
            data, found, bad = exc.data, exc.found, exc
        try:
            if found:
                self.frames_received(data, found)
        except Exception:
            log.exception("%s: dropping the connection after a frame it could not take",
                          self.peer_name())
            self.transport.close()
            return
        if bad is not None:
            log.warning("%s sent a malformed frame (%s); closing its connection, after "
                        "taking the %d whole frames before it", self.peer_name(), bad,
                        len(found))
            self.transport.close()

    def peer_name(self) -> str:
        """Who is at the other end, for logs: the role it proved and where it is."""
        return f"{self.role or 'a peer'} ({self.peer_address()})"

    def peer_address(self) -> str:
        try:
            return describe_peer(self.transport)
        except (OSError, AttributeError):  # gone already
            return "?"

    def frames_received(self, data: bytes, found: list) -> None:
        """Default: decode control frames and pass each message to `message_received`."""
        view = memoryview(data)
        for kind, _dest, start, end in found:
            if kind == CONTROL:
                self.message_received(parse_control(view[start:end]))

    def message_received(self, message: Message) -> None:
        """Override to handle control messages."""

    def send(self, message: Message) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(control_frame(message))

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(exc)


def run_loop(main: Coroutine[Any, Any, int]) -> int:
    """Run the daemon's main coroutine on uvloop where it is installed."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(main)
    return uvloop.run(main)


def spawn(coro: Coroutine[Any, Any, Any], name: str) -> asyncio.Task:
    """A background task whose failure is logged when it happens, not at exit."""
    task = asyncio.get_running_loop().create_task(coro, name=name)

    def done(t: asyncio.Task) -> None:
        if not t.cancelled() and t.exception() is not None:
            log.error("background task %s failed", name, exc_info=t.exception())

    task.add_done_callback(done)
    return task


async def cancel(task: asyncio.Task | None) -> None:
    if task is not None:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task


async def listen_unix(factory: Any, path: str, who: str) -> asyncio.AbstractServer:
    """Listen on the Unix socket file `path` (in the container's private folder, where
    only a restart of ours can have left a socket)."""
    try:
        if not path.startswith("\0"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)  # our own predecessor's: nobody else can write that folder
        return await asyncio.get_running_loop().create_unix_server(factory, path)
    except OSError as exc:
        why = ("another process holds it" if exc.errno == errno.EADDRINUSE
               else exc.strerror or str(exc))
        msg = f"{who}: cannot listen on the Unix socket {path}: {why}"
        raise SchedulerError(msg) from exc
