"""The stream manager's connections: its local tasks' and its peers', and the dialling of
peers. Each link hands what it reads to the stream manager (`Hub`) and writes what the
router gives it; a link whose write buffer passes the high watermark is a backpressure
cause until it drains below the low one.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
from collections.abc import Callable
from typing import Protocol

from google.protobuf.message import Message

from ..proto import control_pb2, plans_pb2
from ..wire import auth
from ..wire.aio import FramedProtocol, listen_unix, spawn
from ..wire.frames import CONTROL
from .backpressure import Backpressure
from .rollback import Rollback

log = logging.getLogger("heronbridge.runtime.stream_manager")


class Hub(Protocol):
    """What links tell the stream manager."""

    id: str
    topology_id: str
    bp_limits: tuple[int, int]  # a link's write buffer: (high, low) watermarks
    backpressure: Backpressure
    rollback: Rollback  # told of every loss (a link gone)

    def on_frames(self, source: Link, data: bytes, found: list) -> None: ...
    def undeliverable(self, chunks: list) -> None: ...
    def instance_message(self, link: InstanceLink, message: Message) -> None: ...
    def instance_gone(self, link: InstanceLink) -> None: ...
    def profile(self, link: Link, request: control_pb2.ProfileRequest) -> None: ...
    def read_logs(self, link: Link, request: control_pb2.LogRequest) -> None: ...


def is_open(link: FramedProtocol) -> bool:
    return link.transport is not None and not link.transport.is_closing()


def close(link: FramedProtocol) -> None:
    if link.transport is not None:
        link.transport.close()


class Link(FramedProtocol):
    """A connection the stream manager writes data to: a local task or a peer."""

    def __init__(self, hub: Hub) -> None:
        super().__init__()
        self.hub = hub
        self.cause: tuple[str, object] | None = None  # backpressure cause it stands for
        self.sent = 0  # bytes written to it
        self.epoch = 0  # effectively-once: the rollback after which its frames were sent

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        transport.set_write_buffer_limits(*self.hub.bp_limits)  # type: ignore[attr-defined]

    def write_chunks(self, chunks: list) -> None:
        transport = self.transport
        if transport is None or transport.is_closing():
            self.hub.undeliverable(chunks)
            return
        transport.writelines(chunks)
        self.sent += sum(map(len, chunks))

    def pause_writing(self) -> None:
        if self.cause is not None:
            self.hub.backpressure.start(self.cause)

    def resume_writing(self) -> None:
        if self.cause is not None:
            self.hub.backpressure.stop(self.cause)

    def frames_received(self, data: bytes, found: list) -> None:
        self.hub.on_frames(self, data, found)

    def peer_name(self) -> str:
        return f"{self.hub.id}: {self.who()} ({self.peer_address()})"

    def who(self) -> str:
        return "a peer"

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        if self.cause is not None:
            self.hub.backpressure.stop(self.cause)


class InstanceLink(Link):
    """A local task's connection."""

    task: int | None = None
    component: str | None = None
    pid = 0
    is_spout = False

    def who(self) -> str:
        return "an unregistered task" if self.task is None else f"task {self.task}"

    def message_received(self, message: Message) -> None:
        self.hub.instance_message(self, message)

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        self.hub.instance_gone(self)


class PeerServerLink(Link):
    """A connection another stream manager opened to us (it sends, we receive), or the
    UI's or `heronbridge logs`' (the `cli` role), which may only ask for profiles and logs
    of our tasks."""

    peer: str | None = None

    def who(self) -> str:
        if self.role == auth.CLI:
            return "a client asking for profiles or logs"
        return f"stream manager {self.peer or '(not yet introduced)'}"

    def frames_received(self, data: bytes, found: list) -> None:
        if self.role != auth.CLI:
            super().frames_received(data, found)
        elif all(kind == CONTROL for kind, *_ in found):
            FramedProtocol.frames_received(self, data, found)  # never routed
        else:
            log.warning("%s sent data frames; closing its connection", self.peer_name())
            close(self)

    def message_received(self, message: Message) -> None:
        if self.role == auth.CLI:
            if isinstance(message, control_pb2.ProfileRequest):
                self.hub.profile(self, message)
            elif isinstance(message, control_pb2.LogRequest):
                self.hub.read_logs(self, message)
            else:
                log.warning("%s sent a %s; closing its connection", self.peer_name(),
                            type(message).__name__)
                close(self)
        elif isinstance(message, control_pb2.StreamManagerHello):
            if message.topology_id != self.hub.topology_id:
                log.warning("refusing a peer of another topology (%s)", message.topology_id)
                if self.transport is not None:
                    self.transport.close()
                return
            self.peer = message.stmgr_id
        elif isinstance(message, control_pb2.BackPressureNotice):
            self.hub.backpressure.peer(message.stmgr_id, message.active)
        elif isinstance(message, control_pb2.ResumeFrom):
            self.epoch = message.txid

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        if self.peer is not None:
            self.hub.backpressure.peer(self.peer, False)
            self.hub.rollback.lost(f"the link from {self.peer} closed")


class PeerClientLink(Link):
    """Our connection to another stream manager (we send to it)."""

    def who(self) -> str:
        return "a stream manager we send to"


async def serve(hub: Hub, secret: bytes, path: str, bind: str, host: str,
                tls_listen: ssl.SSLContext | None,
                ) -> tuple[asyncio.AbstractServer, asyncio.AbstractServer, int]:
    """Listen for local tasks on the Unix socket `path` and for peers on TCP at `bind`
    (reached at `host`); a connection must prove the secret for this stream manager's
    identity there (wire.auth) before its first frame. Both servers, and the TCP port."""
    tasks = await listen_unix(auth.listen(
        lambda: InstanceLink(hub), secret, {auth.TASK}, f"{hub.id} (tasks)",
        auth.Identity.unix(hub.topology_id, hub.id, path)), path, hub.id)
    peers = auth.listen(lambda: PeerServerLink(hub), secret, {auth.STMGR, auth.CLI},
                        f"{hub.id} (peers)")
    server = await asyncio.get_running_loop().create_server(peers, bind, 0, ssl=tls_listen)
    port = server.sockets[0].getsockname()[1]
    peers.identity = auth.Identity.tcp(hub.topology_id, hub.id, host, port)
    return tasks, server, port


class Peers:
    """The stream managers we send to: one link each, dialled again whenever it drops,
    at the address the physical plan gives (a restarted peer has a new one)."""

    def __init__(self, hub: Hub, secret: bytes, tls_dial: ssl.SSLContext | None,
                 greetings: Callable[[], list[Message]], changed: Callable[[], None]) -> None:
        self.hub = hub
        self.secret = secret
        self.tls_dial = tls_dial
        self.greetings = greetings  # what a new link says first
        self.changed = changed  # a link came up: routes and readiness change
        self.links: dict[str, PeerClientLink] = {}
        self.addresses: dict[str, tuple[str, int]] = {}
        self.dialers: dict[str, asyncio.Task] = {}

    def follow(self, pplan: plans_pb2.PhysicalPlan) -> list[str]:
        """Dial every peer at the address the plan gives; forget those the plan no longer
        lists. Returns the peers forgotten (containers an update removed)."""
        listed = {info.id for info in pplan.stmgrs} | {i.stmgr_id for i in pplan.instances}
        addresses = {info.id: (info.host, info.data_port) for info in pplan.stmgrs
                     if info.id != self.hub.id}
        gone = [peer for peer in self.links if peer not in listed]
        for peer in gone:
            dialer = self.dialers.pop(peer, None)
            if dialer is not None:
                dialer.cancel()
            link = self.links.pop(peer)
            self.addresses.pop(peer, None)
            if link.transport is not None:
                link.transport.close()
        for peer, address in addresses.items():
            if self.addresses.get(peer) == address:
                continue
            # New, or restarted somewhere else: drop the old link, dial the new address.
            if peer in self.dialers:
                self.dialers.pop(peer).cancel()
                log.info("%s: peer %s moved to %s:%d", self.hub.id, peer, *address)
            old = self.links.get(peer)
            if old is not None and old.transport is not None:
                old.transport.close()
            self.links[peer] = PeerClientLink(self.hub)  # unconnected until the dial succeeds
            self.addresses[peer] = address
            self.dialers[peer] = spawn(self._connect(peer, address), f"peer {peer}")
        return gone

    def send(self, message: Message) -> None:
        """To every peer that is connected."""
        for link in self.links.values():
            if is_open(link):
                link.send(message)

    def all_connected(self) -> bool:
        return all(is_open(link) for link in self.links.values())

    def tasks(self) -> list[asyncio.Task]:
        return list(self.dialers.values())

    async def _connect(self, peer: str, address: tuple[str, int]) -> None:
        while True:
            try:
                _, link = await auth.dial(
                    lambda: PeerClientLink(self.hub), self.secret, auth.STMGR,
                    auth.Identity.tcp(self.hub.topology_id, peer, *address),
                    ssl_context=self.tls_dial)
            except (OSError, auth.AuthError) as exc:
                if isinstance(exc, auth.AuthError):
                    log.warning("%s: peer %s at %s:%d: %s", self.hub.id, peer, *address, exc)
                await asyncio.sleep(0.1)
                continue
            link.cause = ("stmgr", peer)
            self.links[peer] = link
            for message in self.greetings():
                link.send(message)
            self.changed()
            await link.closed
            log.warning("%s: lost peer %s at %s:%d; reconnecting", self.hub.id, peer, *address)
            self.hub.rollback.lost(f"the link to {peer} closed")
