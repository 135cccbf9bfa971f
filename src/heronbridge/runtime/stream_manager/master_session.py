"""The stream manager's session with its topology master.

It follows the master's location in the state manager, dials it, registers, and then
heartbeats (readiness, packing, the trees in flight while paused) until the link drops
or the master moves; then it starts again. What the master sends is handed to `handle`.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
import time
from collections.abc import Callable
from typing import NamedTuple

from google.protobuf.message import Message

from ..addresses import MASTER
from ..proto import control_pb2, plans_pb2, topology_pb2
from ..statemgr import TMASTERS, StateManager
from ..statemgr.follow import Follower
from ..wire import auth
from ..wire.aio import FramedProtocol

log = logging.getLogger("heronbridge.runtime.stream_manager")


class Status(NamedTuple):
    """What a heartbeat says; one is sent when it changes (and every interval)."""

    ready: bool
    packing_id: str
    paused: bool
    trees_pending: int


class MasterLink(FramedProtocol):
    def __init__(self, session: MasterSession) -> None:
        super().__init__()
        self.session = session

    def message_received(self, message: Message) -> None:
        if isinstance(message, control_pb2.RegisterStreamManagerResponse) \
                and not message.status.ok:
            log.error("topology master refused registration: %s", message.status.message)
            if self.transport is not None:
                self.transport.close()
            return
        self.session.handle(message)


class MasterSession:
    def __init__(self, name: str, topology: str, topology_id: str, statemgr: StateManager,
                 secret: bytes, tls_dial: ssl.SSLContext | None, interval: float,
                 registration: Callable[[], control_pb2.RegisterStreamManagerRequest],
                 status: Callable[[], Status], handle: Callable[[Message], None]) -> None:
        self.name = name
        self.topology = topology
        self.topology_id = topology_id
        self.statemgr = statemgr
        self.secret = secret
        self.tls_dial = tls_dial
        self.interval = interval
        self.registration = registration
        self.status = status
        self.handle = handle
        self.link: MasterLink | None = None
        self._sent: Status | None = None

    def send(self, message: Message) -> None:
        """To the master, if there is one right now."""
        if self.link is not None and self.link.transport is not None \
                and not self.link.transport.is_closing():
            self.link.send(message)

    def heartbeat(self, force: bool = False) -> None:
        status = self.status()
        if self.link is None or (not force and status == self._sent):
            return
        self._sent = status
        self.link.send(control_pb2.StreamManagerHeartbeat(
            stmgr_id=self.name, time_ms=int(time.time() * 1000),
            instances_ready=status.ready, packing_id=status.packing_id,
            paused=status.paused, trees_pending=status.trees_pending))

    async def report_drain(self, state: Callable[[], int | None]) -> None:
        """While the spouts are paused, tell the master how many trees are still in
        flight as soon as that changes: an update waits for none."""
        while state() == topology_pb2.PAUSED:
            self.heartbeat()
            await asyncio.sleep(0.02)

    async def run(self) -> None:
        master = Follower(self.statemgr, TMASTERS, self.topology)
        try:
            while True:
                location = master.value
                if location is None or location.topology_id != self.topology_id:
                    await master.changed()
                    continue
                try:
                    _, link = await auth.dial(
                        lambda: MasterLink(self), self.secret, auth.STMGR,
                        auth.Identity.tcp(self.topology_id, MASTER, location.host,
                                          location.server_port), ssl_context=self.tls_dial)
                except (OSError, auth.AuthError) as exc:
                    if isinstance(exc, auth.AuthError):
                        log.warning("%s: topology master at %s:%d: %s", self.name,
                                    location.host, location.server_port, exc)
                    await master.changed(0.2)  # a new location, or this one again
                    continue
                await self._registered(link, location, master)
                self.link = None
                log.warning("%s: lost the topology master; reconnecting", self.name)
        finally:
            master.cancel()

    async def _registered(self, link: MasterLink, location: plans_pb2.TopologyMasterLocation,
                          master: Follower[plans_pb2.TopologyMasterLocation]) -> None:
        """Register, then heartbeat until the link drops or the master moves."""
        self.link = link
        self._sent = None
        link.send(self.registration())
        moved = asyncio.ensure_future(master.changed())
        try:
            while not link.closed.done():
                self.heartbeat(force=True)
                await asyncio.wait([link.closed, moved], timeout=self.interval)
                if moved.done():
                    new = moved.result()
                    if new is None or (new.host, new.server_port) != (location.host,
                                                                       location.server_port):
                        if link.transport is not None:
                            link.transport.close()  # a new master: follow it
                        return
                    moved = asyncio.ensure_future(master.changed())
        finally:
            moved.cancel()
