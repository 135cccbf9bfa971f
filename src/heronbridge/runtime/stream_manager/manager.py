"""The stream manager: one per container, the only hop between tasks.

It routes data frames on their 9-byte header (the sender already chose the destination
task), so tuple values are never decoded here; it tracks the XOR acks of its local
spouts; and it runs backpressure: when a connection's unsent bytes pass the high
watermark, it stops reading from its local spouts and tells every peer to do the same,
until the buffer drains below the low watermark.

A new physical plan (an update) is applied live: local tasks the new plan moved or
dropped are let go, new ones are accepted when they register (a task that registers
before the plan reaches us waits for it), routes switch, and peers are dialled.

Backpressure time is also counted per cause (`backpressure-ms/task/N`,
`backpressure-ms/stmgr/ID`) with each local task's queue (`queue-bytes/task/N`): the
health manager reads them to find who is slow.

Under effectively-once it routes checkpoint markers as it routes data, hands the master's
checkpoint and rollback messages to its tasks, reports every loss to the master, and
after a rollback forwards only frames sent after it: a task's once it restored, a peer's
once the peer said where the rollback began on that link (ResumeFrom).
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import time
from collections import defaultdict
from typing import Any

from ..addresses import MASTER, METRICS, host_address, metrics_address, stmgr_address, stmgr_id
from ..api.tuple import MULTI
from ..config import TopologyConfig
from ..errors import SchedulerError
from ..plan.codec import packing_from_proto, topology_from_proto
from ..plan.tasks import TaskLayout
from ..procfs import rss_bytes
from ..proto import control_pb2, plans_pb2, topology_pb2
from ..state import PACKING_PLANS, TMASTERS, TOPOLOGIES, StateManager
from ..state.follow import Follower
from ..telemetry import (
    BACKPRESSURE_MS,
    BYTES_ROUTED,
    DISCARDED_FRAMES,
    DROPPED_FRAMES,
    HELD_BYTES,
    HELD_FRAMES,
    MALFORMED_FRAMES,
    MAX_CONNECTION_BUFFER,
    RSS_BYTES,
    TREES_ACKED,
    TREES_EXPIRED,
    TREES_FAILED,
    TREES_PENDING,
    TUPLES_ROUTED,
)
from ..wire import auth, frames, tls
from ..wire.aio import FramedProtocol, cancel, listen_unix, spawn
from ..wire.serde import make_serializer
from .acking import XorTracker
from .undelivered import Undelivered

log = logging.getLogger("heronbridge.runtime.stream_manager")

SHIFT = frames.ROOT_TASK_SHIFT
STMGR_COMPONENT = "__stmgr__"
PARK_SECS = 10.0  # a task that registers before the plan that has it waits this long
BP_BY_CAUSE = BACKPRESSURE_MS + "/{}/{}"  # e.g. backpressure-ms/task/4
QUEUE_BYTES = "queue-bytes/task/{}"
BYTES_TO = "bytes-to/task/{}"  # written to a local task: what it consumed, near enough
HELD = ("held", "frames")  # the backpressure cause of frames held for tasks that are down
HOLD_SECS = 30.0  # at least; the executor's longest restart back-off (scheduler/restarts.py)


def _remaining(link: InstanceLink) -> bool:
    return link.transport is not None and not link.transport.is_closing()


class _Link(FramedProtocol):
    """A connection the stream manager writes data to: a local task or a peer."""

    def __init__(self, sm: StreamManager) -> None:
        super().__init__()
        self.sm = sm
        self.cause: tuple[str, Any] | None = None  # backpressure cause this link stands for
        self.sent = 0  # bytes written to it
        self.epoch = 0  # effectively-once: the rollback after which its frames were sent

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        transport.set_write_buffer_limits(self.sm.conf.bp_high_bytes, self.sm.conf.bp_low_bytes)

    def write_chunks(self, chunks: list) -> None:
        transport = self.transport
        if transport is None or transport.is_closing():
            self.sm.undeliverable(chunks)
            return
        transport.writelines(chunks)
        self.sent += sum(map(len, chunks))

    def pause_writing(self) -> None:
        if self.cause is not None:
            self.sm.backpressure_start(self.cause)

    def resume_writing(self) -> None:
        if self.cause is not None:
            self.sm.backpressure_stop(self.cause)

    def frames_received(self, data: bytes, found: list) -> None:
        self.sm.on_frames(self, data, found)

    def peer_name(self) -> str:
        return f"{self.sm.id}: {self.who()} ({self.peer_address()})"

    def who(self) -> str:
        return "a peer"

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        if self.cause is not None:
            self.sm.backpressure_stop(self.cause)


class InstanceLink(_Link):
    """A local task's connection."""

    task: int | None = None
    pid = 0
    is_spout = False

    def who(self) -> str:
        return "an unregistered task" if self.task is None else f"task {self.task}"

    def message_received(self, message: Any) -> None:
        if isinstance(message, control_pb2.RegisterInstanceRequest):
            self.sm.register_instance(self, message)
        elif self.task is None:
            return
        elif isinstance(message, control_pb2.InstanceStarted):
            self.sm.instance_started(self)
        elif isinstance(message, control_pb2.InstanceStateStored):
            self.sm.to_master(message)
        elif isinstance(message, control_pb2.InstanceRestored):
            self.sm.instance_restored(self, message)

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        self.sm.instance_gone(self)


class PeerServerLink(_Link):
    """A connection another stream manager opened to us (it sends, we receive)."""

    peer: str | None = None

    def who(self) -> str:
        return f"stream manager {self.peer or '(not yet introduced)'}"

    def message_received(self, message: Any) -> None:
        if isinstance(message, control_pb2.StreamManagerHello):
            if message.topology_id != self.sm.topology_id:
                log.warning("refusing a peer of another topology (%s)", message.topology_id)
                self.transport.close()
                return
            self.peer = message.stmgr_id
        elif isinstance(message, control_pb2.BackPressureNotice):
            self.sm.peer_backpressure(message.stmgr_id, message.active)
        elif isinstance(message, control_pb2.ResumeFrom):
            self.epoch = message.txid

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        if self.peer is not None:
            self.sm.peer_backpressure(self.peer, False)
            self.sm.lost(f"the link from {self.peer} closed")


class PeerClientLink(_Link):
    """Our connection to another stream manager (we send to it)."""

    def who(self) -> str:
        return "a stream manager we send to"


class MasterLink(FramedProtocol):
    def __init__(self, sm: StreamManager) -> None:
        super().__init__()
        self.sm = sm

    def message_received(self, message: Any) -> None:
        if isinstance(message, (control_pb2.RegisterStreamManagerResponse,
                                control_pb2.NewPhysicalPlan)):
            if isinstance(message, control_pb2.RegisterStreamManagerResponse) \
                    and not message.status.ok:
                log.error("topology master refused registration: %s", message.status.message)
                self.transport.close()
                return
            if message.HasField("pplan"):
                self.sm.apply_pplan(message.pplan)
        elif isinstance(message, control_pb2.TopologyStateChange):
            self.sm.set_state(message.state)
        elif isinstance(message, control_pb2.RestartTask):
            self.sm.restart_task(message)
        elif isinstance(message, control_pb2.StartCheckpoint):
            self.sm.start_checkpoint(message)
        elif isinstance(message, control_pb2.RestoreState):
            self.sm.restore_state(message)
        elif isinstance(message, control_pb2.StartProcessing):
            self.sm.start_processing(message)


class StreamManager:
    def __init__(self, state: StateManager, topology_name: str, container: int,
                 secret: bytes) -> None:
        self.statemgr = state
        self.secret = secret
        topology = state.get(TOPOLOGIES, topology_name)
        packing = state.get(PACKING_PLANS, topology_name)
        if topology is None or packing is None:
            msg = f"topology {topology_name!r}: no topology or packing plan in the state manager"
            raise SchedulerError(msg)
        self.topology_id = topology.id
        self.plan = topology_from_proto(topology)
        self.name = self.plan.name
        self.conf = TopologyConfig.read(self.plan.config, self.name)
        self.tls_listen, self.tls_dial = tls.contexts(self.conf.tls, self.name)
        self.container = container
        self.id = stmgr_id(container)
        packing_plan = packing_from_proto(packing)
        self.packing_id = packing_plan.id
        self._place({i.task_id for c in packing_plan.containers if c.id == container
                     for i in c.instances})
        self.parked: dict[InstanceLink, tuple[Any, float]] = {}
        self.bp_by_cause: dict[tuple, float] = defaultdict(float)
        self.bp_since: dict[tuple, float] = {}
        self.instances: dict[int, InstanceLink] = {}
        self.waiting: list[InstanceLink] = []  # registered before the physical plan came
        self.route: dict[int, _Link] = {}  # destination task -> link
        self.owner: dict[int, str] = {}  # task -> stream manager id
        self.peers: dict[str, PeerClientLink] = {}
        self.peer_addresses: dict[str, tuple[str, int]] = {}
        self.peer_dialers: dict[str, asyncio.Task] = {}
        self.pplan: plans_pb2.PhysicalPlan | None = None
        self.state: int | None = None
        self.master: MasterLink | None = None
        self.tracker = XorTracker(self.conf.xor_buckets)
        timeout = self.conf.message_timeout_secs
        self.undelivered = Undelivered(max(timeout, HOLD_SECS), timeout,
                                       self.conf.held_max_bytes)
        self.local_causes: set = set()
        self.remote_causes: set[str] = set()
        self.spouts_paused = False
        self.paused_since = 0.0
        self.bp_ms = 0.0
        self.routed = self.bytes_routed = self.dropped = self.malformed = 0
        self.serializer = make_serializer(self.conf.serializer, self.name)
        self.acked = self.failed = self.expired = 0
        self._ready_sent: bool | None = None
        self._stopping = asyncio.Event()
        self._tasks: list[asyncio.Task] = []
        self.stateful = self.conf.stateful
        self.txid = 0  # the current rollback (effectively-once)
        self.restore: control_pb2.RestoreState | None = None
        self.restored: dict[int, Any] = {}  # local task -> its InstanceRestored for txid
        self.restore_reported = False
        self.processing_txid = 0  # the rollback the master said to process after
        self.discarded = 0  # frames sent before the current rollback, not forwarded
        self.started_tasks: set[int] = set()  # local tasks whose component is set up

    # -- lifecycle --------------------------------------------------------------

    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self._stopping.set)
        path = stmgr_address(self.topology_id, self.container)
        self.instance_server = await listen_unix(auth.listen(
            lambda: InstanceLink(self), self.secret, {auth.TASK}, f"{self.id} (tasks)",
            auth.Identity.unix(self.topology_id, self.id, path)), path, self.id)
        bind, self.host = host_address(self.conf.host)
        peers = auth.listen(lambda: PeerServerLink(self), self.secret, {auth.STMGR},
                            f"{self.id} (peers)")
        self.peer_server = await loop.create_server(peers, bind, 0, ssl=self.tls_listen)
        self.data_port = self.peer_server.sockets[0].getsockname()[1]
        peers.identity = auth.Identity.tcp(self.topology_id, self.id, self.host,
                                           self.data_port)
        log.info("%s of topology %r: local tasks %s, peers reach it at %s:%d", self.id,
                 self.name, sorted(self.local_tasks), self.host, self.data_port)
        self._tasks = [spawn(self._master_session(), "master session"),
                       spawn(self._metrics_loop(), "metrics")]
        if self.conf.acking and self.conf.message_timeouts:
            self._tasks.append(spawn(self._expire_loop(), "expiry"))
        if self.conf.acking:
            self._tasks.append(spawn(self._undelivered_loop(), "undelivered frames"))
        await self._stopping.wait()
        for task in [*self._tasks, *self.peer_dialers.values()]:
            await cancel(task)
        self.instance_server.close()
        self.peer_server.close()
        for link in list(self.instances.values()):
            link.transport.close()
        log.info("%s: stopped", self.id)
        return 0

    async def _master_session(self) -> None:
        master = Follower(self.statemgr, TMASTERS, self.name)
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
                        log.warning("%s: topology master at %s:%d: %s", self.id,
                                    location.host, location.server_port, exc)
                    await master.changed(0.2)  # a new location, or this one again
                    continue
                await self._registered_session(link, location, master)
                self.master = None
                log.warning("%s: lost the topology master; reconnecting", self.id)
        finally:
            master.cancel()

    async def _registered_session(self, link: MasterLink, location: Any,
                                  master: Follower) -> None:
        """Register, then heartbeat until the link drops or the master moves."""
        self.master = link
        self._ready_sent = None
        info = plans_pb2.StreamManagerInfo(id=self.id, container=self.container,
                                           host=self.host, data_port=self.data_port,
                                           pid=os.getpid())
        link.send(control_pb2.RegisterStreamManagerRequest(
            topology_id=self.topology_id, stmgr=info, task_ids=sorted(self.local_tasks)))
        interval = self.conf.heartbeat_interval_secs
        moved = asyncio.ensure_future(master.changed())
        try:
            while not link.closed.done():
                self.heartbeat(force=True)
                await asyncio.wait([link.closed, moved], timeout=interval)
                if moved.done():
                    new = moved.result()
                    if new is None or (new.host, new.server_port) != (location.host,
                                                                       location.server_port):
                        link.transport.close()  # a new master: follow it
                        return
                    moved = asyncio.ensure_future(master.changed())
        finally:
            moved.cancel()

    def _place(self, local_tasks: set[int]) -> None:
        """Which tasks are ours, and which of them are spouts, under the current plan."""
        layout = TaskLayout.of(self.plan)
        self.local_tasks = local_tasks
        spouts = {t for t, c in layout.task_component.items()
                  if c in self.plan.components and self.plan.components[c].is_spout}
        self.local_spouts = self.local_tasks & spouts
        self.all_spouts_local = spouts <= self.local_tasks

    def heartbeat(self, force: bool = False) -> None:
        paused = self.state == topology_pb2.PAUSED
        ready = (self.ready, self.packing_id, paused, len(self.tracker) if paused else 0)
        if self.master is None or (not force and ready == self._ready_sent):
            return
        self._ready_sent = ready
        self.master.send(control_pb2.StreamManagerHeartbeat(
            stmgr_id=self.id, time_ms=int(time.time() * 1000), instances_ready=ready[0],
            packing_id=self.packing_id, paused=paused, trees_pending=ready[3]))

    async def _report_drain(self) -> None:
        """While the spouts are paused, tell the master how many trees are still in
        flight as soon as that changes: an update waits for none."""
        while self.state == topology_pb2.PAUSED:
            self.heartbeat()
            await asyncio.sleep(0.02)

    @property
    def ready(self) -> bool:
        # Under effectively-once the first rollback builds the components: registered is
        # ready. Otherwise a task is ready once its component is set up.
        return (self.pplan is not None and set(self.instances) == self.local_tasks
                and (self.stateful or self.started_tasks >= self.local_tasks)
                and all(p.transport is not None and not p.transport.is_closing()
                        for p in self.peers.values()))

    # -- physical plan and registrations ------------------------------------------

    def apply_pplan(self, pplan: plans_pb2.PhysicalPlan) -> None:
        first = self.pplan is None
        if pplan.packing_id and pplan.packing_id != self.packing_id:
            self._replan(pplan)
        self.pplan = pplan
        self.owner = {i.task_id: i.stmgr_id for i in pplan.instances}
        listed = {info.id for info in pplan.stmgrs} | set(self.owner.values())
        for gone in [peer for peer in self.peers if peer not in listed]:
            # A container the update removed: stop dialling it.
            dialer = self.peer_dialers.pop(gone, None)
            if dialer is not None:
                dialer.cancel()
            link = self.peers.pop(gone)
            self.peer_addresses.pop(gone, None)
            if link.transport is not None:
                link.transport.close()
            self.peer_backpressure(gone, False)
        for info in pplan.stmgrs:
            address = (info.host, info.data_port)
            if info.id == self.id or self.peer_addresses.get(info.id) == address:
                continue
            # New, or restarted somewhere else: drop the old link, dial the new address.
            if info.id in self.peer_dialers:
                self.peer_dialers.pop(info.id).cancel()
                log.info("%s: peer %s moved to %s:%d", self.id, info.id, *address)
            old = self.peers.get(info.id)
            if old is not None and old.transport is not None:
                old.transport.close()
            self.peers[info.id] = PeerClientLink(self)  # unconnected until the dial succeeds
            self.peer_addresses[info.id] = address
            self.peer_dialers[info.id] = spawn(self._connect_peer(info.id, address),
                                               f"peer {info.id}")
        self._rebuild_routes()
        if first:
            waiting, self.waiting = self.waiting, []
            for link in waiting:
                self._welcome(link)
        for link, (req, _) in list(self.parked.items()):
            if req.task_id in self.local_tasks:
                del self.parked[link]
                self.register_instance(link, req)
        for task in self.undelivered.tasks():
            if task not in self.owner and task not in self.local_tasks:  # not coming back
                self._give_up(self.undelivered.forget(task))
        self._release_reachable()
        self.heartbeat()

    def _replan(self, pplan: plans_pb2.PhysicalPlan) -> None:
        """An update: the new topology and our tasks in it. Tasks that are no longer ours
        (or are ours under another identity) are let go; their executor stops them."""
        self.plan = topology_from_proto(pplan.topology)
        self.packing_id = pplan.packing_id
        mine = {i.task_id: i.component for i in pplan.instances if i.stmgr_id == self.id}
        old_component = {t: link.component for t, link in self.instances.items()}
        self._place(set(mine))
        for task, link in list(self.instances.items()):
            if mine.get(task) != old_component[task]:
                log.info("%s: task %d is not ours under packing %s; letting it go", self.id,
                         task, self.packing_id)
                self._let_go(link)
        log.info("%s: packing %s, local tasks %s", self.id, self.packing_id,
                 sorted(self.local_tasks))

    def _let_go(self, link: InstanceLink) -> None:
        # Its link stays open until its executor stops it: a task that lost its stream
        # manager would exit and be restarted, under its old identity, before the
        # executor saw the new plan.
        self.instance_gone(link)

    def restart_task(self, req: Any) -> None:
        """End a local task (the health manager asked: a slow instance); its executor
        starts it again as it does any task that exits."""
        link = self.instances.get(req.task_id)
        if link is None or not link.pid:
            log.warning("%s: asked to restart task %d, which is not connected here", self.id,
                        req.task_id)
            return
        log.warning("%s: restarting task %d (pid %d): %s", self.id, req.task_id, link.pid,
                    req.reason)
        try:
            os.kill(link.pid, signal.SIGTERM)
        except (ProcessLookupError, PermissionError) as exc:
            log.warning("%s: cannot signal task %d: %s", self.id, req.task_id, exc)

    async def _connect_peer(self, peer: str, address: tuple[str, int]) -> None:
        while not self._stopping.is_set():
            try:
                _, link = await auth.dial(
                    lambda: PeerClientLink(self), self.secret, auth.STMGR,
                    auth.Identity.tcp(self.topology_id, peer, *address),
                    ssl_context=self.tls_dial)
            except (OSError, auth.AuthError) as exc:
                if isinstance(exc, auth.AuthError):
                    log.warning("%s: peer %s at %s:%d: %s", self.id, peer, *address, exc)
                await asyncio.sleep(0.1)
                continue
            link.cause = ("stmgr", peer)
            self.peers[peer] = link
            link.send(control_pb2.StreamManagerHello(topology_id=self.topology_id,
                                                     stmgr_id=self.id))
            if self.local_causes:  # a peer that restarted pauses its spouts too
                link.send(control_pb2.BackPressureNotice(stmgr_id=self.id, active=True))
            if self.stateful:
                link.send(control_pb2.ResumeFrom(txid=self.txid))
            self._rebuild_routes()
            self._release_reachable()
            self.heartbeat()
            await link.closed
            log.warning("%s: lost peer %s at %s:%d; reconnecting", self.id, peer, *address)
            self.lost(f"the link to {peer} closed")

    def _rebuild_routes(self) -> None:
        # Under at-least-once a local task is routed to once its component is set up:
        # until then its frames are held (undelivered.py), so that the trees they carry
        # do not time out in its socket while it imports and opens.
        route: dict[int, _Link] = dict(self.instances) if not self.conf.acking else {
            t: link for t, link in self.instances.items() if t in self.started_tasks}
        for task, owner in self.owner.items():
            if owner != self.id and owner in self.peers:
                route[task] = self.peers[owner]
        self.route = route

    def register_instance(self, link: InstanceLink, req: Any) -> None:
        task = req.task_id
        if req.topology_id == self.topology_id and task not in self.local_tasks \
                and self.parked.get(link, (None, time.monotonic()))[1] + PARK_SECS \
                > time.monotonic():
            # Perhaps a task of a plan that has not reached us yet: wait for it.
            self.parked.setdefault(link, (req, time.monotonic()))
            asyncio.get_running_loop().call_later(PARK_SECS, self._unpark, link)
            return
        self.parked.pop(link, None)
        if req.topology_id != self.topology_id or task not in self.local_tasks:
            reason = (f"{self.id}: task {task} of topology {req.topology_id!r} does not belong "
                      f"here; expected a task among {sorted(self.local_tasks)} of "
                      f"{self.topology_id!r}")
            link.send(control_pb2.RegisterInstanceResponse(
                status=control_pb2.Status(ok=False, message=reason)))
            link.transport.close()
            return
        old = self.instances.get(task)
        if old is not None and old is not link:
            old.transport.close()
        link.task = task
        link.pid = req.pid
        link.component = TaskLayout.of(self.plan).task_component.get(task)
        link.cause = ("instance", task)
        link.is_spout = task in self.local_spouts
        if link.is_spout:  # a new life: the trees of the last are nobody's now
            self.tracker.forget_task(task, SHIFT)
        self.instances[task] = link
        self.started_tasks.discard(task)  # this incarnation has not set its component up
        self._rebuild_routes()
        if link.is_spout and self.spouts_paused:
            link.transport.pause_reading()
        if self.pplan is None:
            self.waiting.append(link)
        else:
            self._welcome(link)
        self.heartbeat()

    def instance_started(self, link: InstanceLink) -> None:
        if self.instances.get(link.task) is link:
            self.started_tasks.add(link.task)
            self._rebuild_routes()
            self._release_reachable()
            self.heartbeat()

    def _welcome(self, link: InstanceLink) -> None:
        link.send(control_pb2.RegisterInstanceResponse(status=control_pb2.Status(ok=True),
                                                       pplan=self.pplan))
        if link.is_spout and self.state is not None:
            link.send(control_pb2.TopologyStateChange(state=self.state))
        if self.restore is not None:  # it restores too; the master hears of the loss
            link.send(self.restore)
        self._release_reachable()

    def _unpark(self, link: InstanceLink) -> None:
        parked = self.parked.get(link)
        if parked is not None and _remaining(link):
            self.register_instance(link, parked[0])  # refused now: its wait is over
        else:
            self.parked.pop(link, None)

    def instance_gone(self, link: InstanceLink) -> None:
        self.parked.pop(link, None)
        if link.task is None or self.instances.get(link.task) is not link:
            return
        del self.instances[link.task]
        if link in self.waiting:
            self.waiting.remove(link)
        self._rebuild_routes()
        if link.is_spout:
            self.tracker.forget_task(link.task, SHIFT)
        log.warning("%s: task %d disconnected", self.id, link.task)
        self.restored.pop(link.task, None)
        self.started_tasks.discard(link.task)
        self.lost(f"task {link.task} disconnected")
        self.heartbeat()

    def set_state(self, state: int) -> None:
        was, self.state = self.state, state
        if state == topology_pb2.PAUSED and was != state:
            spawn(self._report_drain(), "drain report")
        log.info("%s: topology state %s", self.id, topology_pb2.TopologyState.Name(state))
        self._tell_tasks(control_pb2.TopologyStateChange(state=state), spouts=True)

    def _tell_tasks(self, message: Any, spouts: bool = False) -> None:
        """Send every local task (or spout) that has its welcome a control message."""
        for link in self.instances.values():
            if (link.is_spout or not spouts) and link not in self.waiting:
                link.send(message)

    # -- effectively-once --------------------------------------------------------

    def lost(self, reason: str) -> None:
        """Tuples may have been lost: the topology rolls back (a master that is away
        rolls it back when this stream manager registers again)."""
        if self.stateful and not self._stopping.is_set():
            self.to_master(control_pb2.ResetTopologyState(stmgr_id=self.id, reason=reason))

    def to_master(self, message: Any) -> None:
        if self.master is not None and self.master.transport is not None \
                and not self.master.transport.is_closing():
            self.master.send(message)

    def start_checkpoint(self, msg: Any) -> None:
        if self.processing_txid != self.txid:
            return  # mid-rollback: the master gives this checkpoint up
        self._tell_tasks(msg, spouts=True)

    def restore_state(self, msg: Any) -> None:
        self.txid, self.restore = msg.txid, msg
        self.restored, self.restore_reported = {}, False
        resume = control_pb2.ResumeFrom(txid=msg.txid)
        for link in self.peers.values():
            if _remaining(link):
                link.send(resume)
        self._tell_tasks(msg)
        log.info("%s: rolling back to %s (txid %d)", self.id, msg.checkpoint_id or "empty state",
                 msg.txid)

    def instance_restored(self, link: InstanceLink, msg: Any) -> None:
        if msg.txid != self.txid:
            return
        link.epoch = msg.txid
        self.restored[link.task] = msg
        if self.restore_reported or not set(self.restored) >= self.local_tasks:
            return
        failed = [m for m in self.restored.values() if not m.ok]
        self.restore_reported = True
        self.to_master(control_pb2.StreamManagerRestored(
            stmgr_id=self.id, txid=self.txid, ok=not failed,
            message="; ".join(f"task {m.task_id}: {m.message}" for m in failed)))

    def start_processing(self, msg: Any) -> None:
        if msg.txid != self.txid:
            return
        self.processing_txid = msg.txid
        self._tell_tasks(msg)

    # -- the data path ----------------------------------------------------------

    def on_frames(self, source: _Link, data: bytes, found: list) -> None:
        view = memoryview(data)
        route = self.route
        outgoing: dict[_Link, list] = {}
        gated = self.stateful
        for kind, dest, start, end in found:
            try:
                if kind in (frames.DATA, frames.MARKER):
                    if gated and source.epoch != self.txid:
                        self.discarded += 1  # sent before the current rollback
                        continue
                    link = route.get(dest)
                    if link is None:
                        self._drop(view[start:end])
                        continue
                    chunks = outgoing.get(link)
                    if chunks is None:
                        outgoing[link] = [view[start:end]]
                    else:
                        chunks.append(view[start:end])
                elif kind == frames.ACK:
                    self._acks(frames.ints_from(view[start + frames.HEADER_SIZE:end]), outgoing)
                elif kind == frames.INIT:
                    done: list[int] = []
                    self.tracker.init(
                        frames.ints_from(view[start + frames.HEADER_SIZE:end]).tolist(), done)
                    self._notify(frames.ACKED, done, outgoing)
                elif kind == frames.FAIL:
                    self._fails(frames.ints_from(view[start + frames.HEADER_SIZE:end]), outgoing)
                elif kind == frames.CONTROL:
                    source.message_received(frames.parse_control(view[start:end]))
            except Exception as exc:  # noqa: BLE001 - one bad frame costs only itself
                self.malformed += 1
                log.warning("%s sent a malformed %s frame (%s: %s); skipped it and kept the "
                            "others", source.peer_name(), frames.KIND_NAMES[kind],
                            type(exc).__name__, exc)
        self.routed += len(found)
        self.bytes_routed += len(data)
        for link, chunks in outgoing.items():
            link.write_chunks(chunks)

    def _drop(self, frame: memoryview | bytes) -> None:
        """A frame for a task that cannot be reached now: held for it while the plan has
        it, its trees failed back no sooner than their timeout otherwise (undelivered.py)."""
        if frame[4] != frames.DATA or not self.conf.acking:
            self.dropped += 1
            return
        now = time.monotonic()
        task = frames.HEADER.unpack_from(frame)[2]
        if self.pplan is None or task in self.owner or task in self.local_tasks:
            self._give_up(self.undelivered.hold(task, bytes(frame), now))
            self._held_changed()
        else:
            self._give_up([(now, frame)])

    def _give_up(self, lost: list[tuple[float, bytes]]) -> None:
        """Frames that will not be delivered: their trees fail a message timeout after
        they were held (or dropped)."""
        for since, frame in lost:
            self.dropped += 1
            self.undelivered.fail_later(self._roots(frame), since)

    def _roots(self, frame: memoryview | bytes) -> list[int]:
        """The roots of a data frame's tracked tuples."""
        try:
            records = self.serializer.decode(bytes(frame[frames.DATA_HEADER_SIZE:]))
        except Exception as exc:  # noqa: BLE001 - e.g. a pickled class not importable here
            log.warning("%s: cannot read the roots of a dropped frame (%s: %s); its trees "
                        "fail at their timeout", self.id, type(exc).__name__, exc)
            return []
        roots: set[int] = set()
        for record in records:
            if len(record) == 3:
                root = record[1]
                if root > 0:
                    roots.add(root)
                elif root == MULTI:
                    roots.update(record[2][1::2])
        return list(roots)

    def undeliverable(self, chunks: list) -> None:
        """Frames for a link that closed before they could be written."""
        for chunk in chunks:
            self._drop(chunk)

    def _release_reachable(self) -> None:
        """Deliver the frames held for tasks that can be reached again: a local task
        welcomed, or a peer connected."""
        for task in self.undelivered.tasks():
            link = self.route.get(task)
            if link is None or not _remaining(link) or link in self.waiting \
                    or (isinstance(link, InstanceLink) and self.pplan is None):
                continue
            link.write_chunks(self.undelivered.release(task))
        self._held_changed()

    def _held_changed(self) -> None:
        """Every spout pauses while frames are held: their replays wait in the spouts
        (untracked, so they cannot time out) instead of failing again."""
        held = bool(self.undelivered.tasks())
        if held and HELD not in self.local_causes:
            self.backpressure_start(HELD)
        elif not held and HELD in self.local_causes:
            self.backpressure_stop(HELD)

    async def _undelivered_loop(self) -> None:
        """Give up frames held too long; fail the trees whose time has come."""
        period = min(0.1, self.conf.message_timeout_secs / 10)
        held = self.undelivered
        while True:
            await asyncio.sleep(period)
            if not held:
                continue
            now = time.monotonic()
            self._give_up(held.expired(now))
            self._held_changed()
            due = held.fails_due(now)
            if due:
                outgoing: dict[_Link, list] = {}
                self._fails(due, outgoing)
                for link, chunks in outgoing.items():
                    link.write_chunks(chunks)

    def _acks(self, pairs: Any, outgoing: dict) -> None:
        pairs = pairs.tolist()
        if not self.all_spouts_local:
            local: list[int] = []
            remote: dict[_Link, list[int]] = {}
            for i in range(0, len(pairs), 2):
                task = pairs[i] >> SHIFT
                if task in self.local_spouts:
                    local += pairs[i:i + 2]
                else:
                    link = self.route.get(task)
                    if link is not None:
                        remote.setdefault(link, []).extend(pairs[i:i + 2])
            for link, part in remote.items():
                outgoing.setdefault(link, []).append(frames.int_frame(frames.ACK, 0, part))
            pairs = local
        done: list[int] = []
        self.tracker.ack(pairs, done)
        self._notify(frames.ACKED, done, outgoing)

    def _fails(self, roots: Any, outgoing: dict) -> None:
        local = []
        for root in roots:
            task = root >> SHIFT
            if task in self.local_spouts:
                local.append(root)
            else:
                link = self.route.get(task)
                if link is not None:
                    outgoing.setdefault(link, []).append(
                        frames.int_frame(frames.FAIL, 0, [root]))
        failed: list[int] = []
        self.tracker.fail(local, failed)
        self._notify(frames.FAILED, failed, outgoing)

    def _notify(self, kind: int, roots: list[int], outgoing: dict) -> None:
        """Tell local spouts that trees completed, failed or expired."""
        if not roots:
            return
        if kind == frames.ACKED:
            self.acked += len(roots)
        elif kind == frames.FAILED:
            self.failed += len(roots)
        else:
            self.expired += len(roots)
        if len(self.local_spouts) == 1:
            by_task = {next(iter(self.local_spouts)): roots}
        else:
            by_task = {}
            for root in roots:
                by_task.setdefault(root >> SHIFT, []).append(root)
        for task, part in by_task.items():
            link = self.instances.get(task)
            if link is not None:
                outgoing.setdefault(link, []).append(frames.int_frame(kind, task, part))

    async def _expire_loop(self) -> None:
        # A root expires between T and T * n/(n-1) after its spout emitted it.
        period = self.conf.message_timeout_secs / (self.conf.xor_buckets - 1)
        while True:
            await asyncio.sleep(period)
            outgoing: dict = {}
            self._notify(frames.EXPIRED, self.tracker.rotate(), outgoing)
            for link, chunks in outgoing.items():
                link.write_chunks(chunks)

    # -- backpressure -----------------------------------------------------------

    def backpressure_start(self, cause: tuple) -> None:
        self.bp_since.setdefault(cause, time.monotonic())
        first = not self.local_causes
        self.local_causes.add(cause)
        if first:
            log.info("%s: backpressure started by %s %s", self.id, *cause)
            self._announce(True)
        self._update_spouts()

    def backpressure_stop(self, cause: tuple) -> None:
        since = self.bp_since.pop(cause, None)
        if since is not None:
            self.bp_by_cause[cause] += (time.monotonic() - since) * 1000
        if cause not in self.local_causes:
            return
        self.local_causes.discard(cause)
        if not self.local_causes:
            log.info("%s: backpressure relieved", self.id)
            self._announce(False)
        self._update_spouts()

    def peer_backpressure(self, peer: str, active: bool) -> None:
        if active:
            self.remote_causes.add(peer)
        else:
            self.remote_causes.discard(peer)
        self._update_spouts()

    def _announce(self, active: bool) -> None:
        notice = control_pb2.BackPressureNotice(stmgr_id=self.id, active=active)
        for link in self.peers.values():
            link.send(notice)

    def _update_spouts(self) -> None:
        paused = bool(self.local_causes or self.remote_causes)
        if paused == self.spouts_paused:
            return
        self.spouts_paused = paused
        now = time.monotonic()
        if paused:
            self.paused_since = now
        else:
            self.bp_ms += (now - self.paused_since) * 1000
        for link in self.instances.values():
            if link.is_spout and link.transport is not None and not link.transport.is_closing():
                if paused:
                    link.transport.pause_reading()
                else:
                    link.transport.resume_reading()

    # -- metrics ----------------------------------------------------------------

    def metrics(self) -> control_pb2.TaskMetrics:
        bp = self.bp_ms
        if self.spouts_paused:
            bp += (time.monotonic() - self.paused_since) * 1000
        links = [*self.instances.values(), *self.peers.values()]
        buffered = max((link.transport.get_write_buffer_size() for link in links
                        if link.transport is not None and not link.transport.is_closing()),
                       default=0)
        now = time.monotonic()
        by_cause = dict(self.bp_by_cause)
        for cause, since in self.bp_since.items():
            by_cause[cause] = by_cause.get(cause, 0.0) + (now - since) * 1000
        counters = {BP_BY_CAUSE.format("task" if kind == "instance" else kind, who): ms
                    for (kind, who), ms in by_cause.items()}
        gauges = {QUEUE_BYTES.format(task): link.transport.get_write_buffer_size()
                  for task, link in self.instances.items() if _remaining(link)}
        counters.update({BYTES_TO.format(task): link.sent
                         for task, link in self.instances.items()})
        sample = control_pb2.TaskMetrics(
            component=STMGR_COMPONENT, task_id=-1, container=self.container,
            timestamp_ms=int(time.time() * 1000),
            counters={TUPLES_ROUTED: self.routed, BYTES_ROUTED: self.bytes_routed,
                      DROPPED_FRAMES: self.dropped, MALFORMED_FRAMES: self.malformed,
                      DISCARDED_FRAMES: self.discarded, HELD_FRAMES: self.undelivered.held,
                      TREES_ACKED: self.acked,
                      TREES_FAILED: self.failed, TREES_EXPIRED: self.expired,
                      BACKPRESSURE_MS: bp},
            gauges={TREES_PENDING: len(self.tracker), MAX_CONNECTION_BUFFER: buffered,
                    HELD_BYTES: self.undelivered.bytes, RSS_BYTES: rss_bytes()})
        sample.counters.update(counters)
        sample.gauges.update(gauges)
        return sample

    async def _metrics_loop(self) -> None:
        address = metrics_address(self.topology_id, self.container)
        link: FramedProtocol | None = None
        while True:
            await asyncio.sleep(self.conf.metrics_interval_secs)
            if link is None or link.closed.done():
                try:
                    _, link = await auth.dial(
                        FramedProtocol, self.secret, auth.STMGR,
                        auth.Identity.unix(self.topology_id, METRICS, address))
                except (OSError, auth.AuthError):
                    link = None
                    continue
            link.send(control_pb2.MetricsPublish(tasks=[self.metrics()]))
