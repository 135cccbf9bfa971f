"""The topology master: one per topology, in container 0.

It waits for every container's stream manager, builds and publishes the physical plan,
starts the spouts once every task has registered, keeps the latest metrics of every
task, and answers controller requests (activate, deactivate, metrics).
"""

from __future__ import annotations

import asyncio
import logging
import signal
import time
from typing import Any

from ..addresses import host_address, stmgr_id
from ..config import TopologyConfig
from ..errors import SchedulerError, StateManagerError
from ..plan.codec import topology_from_proto
from ..proto import control_pb2, plans_pb2, topology_pb2
from ..state import (
    PACKING_PLANS,
    PHYSICAL_PLANS,
    TMASTERS,
    TOPOLOGIES,
    NodeExistsError,
    StateManager,
)
from ..state.follow import Follower
from ..wire import auth, tls
from ..wire.aio import FramedProtocol, cancel, spawn

log = logging.getLogger("heronbridge.runtime.topology_master")


class MasterLink(FramedProtocol):
    """A connection to the master: a stream manager, a metrics manager or a client."""

    def __init__(self, master: TopologyMaster) -> None:
        super().__init__()
        self.master = master
        self.stmgr: str | None = None

    def message_received(self, message: Any) -> None:
        self.master.handle(self, message)

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        self.master.link_lost(self)


# What each kind of dialer may send the master.
ALLOWED = {
    auth.STMGR: (control_pb2.RegisterStreamManagerRequest, control_pb2.StreamManagerHeartbeat),
    auth.METRICS: (control_pb2.MetricsPublish,),
    auth.CLI: (control_pb2.ControllerRequest,),
}


class TopologyMaster:
    def __init__(self, state: StateManager, topology_name: str, secret: bytes) -> None:
        self.statemgr = state
        self.secret = secret
        self.topology = state.get(TOPOLOGIES, topology_name)
        self.packing = state.get(PACKING_PLANS, topology_name)
        if self.topology is None or self.packing is None:
            msg = f"topology {topology_name!r}: no topology or packing plan in the state manager"
            raise SchedulerError(msg)
        self.name = topology_name
        self.conf = TopologyConfig.read(topology_from_proto(self.topology).config, self.name)
        self.tls_listen, _ = tls.contexts(self.conf.tls, self.name)
        self.expected = {stmgr_id(c.id) for c in self.packing.containers}
        self.stmgrs: dict[str, tuple[MasterLink, plans_pb2.StreamManagerInfo]] = {}
        self.ready: set[str] = set()
        self.last_heartbeat: dict[str, float] = {}
        self.pplan: plans_pb2.PhysicalPlan | None = None
        self.state = self.topology.state or topology_pb2.RUNNING
        self.started = False
        self.metrics: dict[tuple[str, int, int], control_pb2.TaskMetrics] = {}
        self._stopping = asyncio.Event()
        self._pending: dict[str, Any] = {}
        self._wake = asyncio.Event()

    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self._stopping.set)
        bind, host = host_address(self.conf.host)
        server = await loop.create_server(
            auth.listen(lambda: MasterLink(self), self.secret, set(ALLOWED), "topology master"),
            bind, 0, ssl=self.tls_listen)
        port = server.sockets[0].getsockname()[1]
        self.location = plans_pb2.TopologyMasterLocation(
            topology_name=self.name, topology_id=self.topology.id, host=host, server_port=port)
        self._writer = spawn(self._write_state(), "state writer")
        if not await self._claim():
            server.close()
            return 0
        log.info("topology master of %r at %s:%d, expecting %s", self.name, host, port,
                 sorted(self.expected))
        await self._stopping.wait()
        server.close()
        await cancel(self._writer)
        for kind, message in self._pending.items():  # what the writer had not written yet
            try:
                await asyncio.to_thread(self.statemgr.put, kind, self.name, message)
            except StateManagerError as exc:
                log.error("could not publish %s: %s", kind, exc)
        location = await asyncio.to_thread(self.statemgr.get, TMASTERS, self.name)
        if location == self.location:
            await asyncio.to_thread(self.statemgr.delete, TMASTERS, self.name)
        return 0

    async def _claim(self) -> bool:
        """Publish our location. On ZooKeeper the node is ephemeral: while the session of
        a master that died still holds it (until its timeout), wait for it to go."""
        holder = Follower(self.statemgr, TMASTERS, self.name)
        try:
            while not self._stopping.is_set():
                try:
                    await asyncio.to_thread(self.statemgr.claim, TMASTERS, self.name,
                                            self.location)
                    return True
                except NodeExistsError as exc:
                    log.warning("%s; waiting for it to go", exc)
                    await holder.changed(1.0)
            return False
        finally:
            holder.cancel()

    def _publish(self, kind: str, message: Any) -> None:
        """Write a node without blocking the loop (ZooKeeper may be away for a while);
        writes of one node keep their order, and only the newest waiting one is written."""
        self._pending[kind] = _copy(message)  # the writer's thread must not see it change
        self._wake.set()

    async def _write_state(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._pending:
                kind = next(iter(self._pending))
                message = self._pending.pop(kind)
                try:
                    await asyncio.to_thread(self.statemgr.put, kind, self.name, message)
                except StateManagerError as exc:
                    log.error("could not publish %s: %s; retrying", kind, exc)
                    self._pending.setdefault(kind, message)
                    await asyncio.sleep(1.0)

    def handle(self, link: MasterLink, message: Any) -> None:
        if not isinstance(message, ALLOWED.get(link.role, ())):
            log.warning("refused %s from a %s link; closing it", type(message).__name__,
                        link.role)
            link.transport.close()
            return
        if isinstance(message, control_pb2.RegisterStreamManagerRequest):
            self._register(link, message)
        elif isinstance(message, control_pb2.StreamManagerHeartbeat):
            self._heartbeat(link, message)
        elif isinstance(message, control_pb2.MetricsPublish):
            for task in message.tasks:
                self.metrics[(task.component, task.task_id, task.container)] = task
        elif isinstance(message, control_pb2.ControllerRequest):
            spawn(self._answer(link, message), "controller request")

    def _register(self, link: MasterLink, req: Any) -> None:
        sid = req.stmgr.id
        if req.topology_id != self.topology.id or sid not in self.expected:
            reason = (f"topology {self.name!r}: stream manager {sid!r} of topology "
                      f"{req.topology_id!r} is not expected; expected one of "
                      f"{sorted(self.expected)} of {self.topology.id!r}")
            link.send(control_pb2.RegisterStreamManagerResponse(
                status=control_pb2.Status(ok=False, message=reason)))
            return
        old = self.stmgrs.get(sid)
        if old is not None and old[0] is not link and old[0].transport is not None:
            old[0].transport.close()
        link.stmgr = sid
        self.stmgrs[sid] = (link, req.stmgr)
        self.ready.discard(sid)
        log.info("registered %s (container %d, port %d)", sid, req.stmgr.container,
                 req.stmgr.data_port)
        if self.pplan is None and set(self.stmgrs) == self.expected:
            self._build_pplan()
        elif self.pplan is not None:
            self._build_pplan()  # a restarted stream manager may listen on a new port
        else:
            link.send(control_pb2.RegisterStreamManagerResponse(
                status=control_pb2.Status(ok=True)))

    def _build_pplan(self) -> None:
        pplan = plans_pb2.PhysicalPlan(topology=self.topology)
        pplan.topology.state = self.state
        for sid in sorted(self.stmgrs):
            pplan.stmgrs.append(self.stmgrs[sid][1])
        for container in self.packing.containers:
            for inst in container.instances:
                pplan.instances.add(task_id=inst.task_id, component=inst.component,
                                    component_index=inst.component_index,
                                    stmgr_id=stmgr_id(container.id))
        self.pplan = pplan
        self._publish(PHYSICAL_PLANS, pplan)
        for link, _ in self.stmgrs.values():
            link.send(control_pb2.RegisterStreamManagerResponse(
                status=control_pb2.Status(ok=True), pplan=pplan))

    def _heartbeat(self, link: MasterLink, hb: Any) -> None:
        if link.stmgr is None:
            return
        self.last_heartbeat[link.stmgr] = time.monotonic()
        was_ready = link.stmgr in self.ready
        if hb.instances_ready:
            self.ready.add(link.stmgr)
        else:
            self.ready.discard(link.stmgr)
        if self.ready == self.expected and not self.started:
            self.started = True
            log.info("every task registered: topology %r is %s", self.name,
                     topology_pb2.TopologyState.Name(self.state))
            self._broadcast_state()
        elif self.started and hb.instances_ready and not was_ready:
            # A stream manager that came back (or lost its tasks) learns the state again.
            link.send(control_pb2.TopologyStateChange(state=self.state))

    def _broadcast_state(self) -> None:
        for link, _ in self.stmgrs.values():
            link.send(control_pb2.TopologyStateChange(state=self.state))

    async def _answer(self, link: MasterLink, req: Any) -> None:
        link.send(await self._control(req))

    async def _control(self, req: Any) -> control_pb2.ControllerResponse:
        ok = control_pb2.Status(ok=True)
        if req.topology_name and req.topology_name != self.name:
            return control_pb2.ControllerResponse(status=control_pb2.Status(
                ok=False, message=f"this master runs {self.name!r}, not {req.topology_name!r}"))
        which = req.WhichOneof("action")
        if which == "set_state":
            if req.set_state not in (topology_pb2.RUNNING, topology_pb2.PAUSED):
                return control_pb2.ControllerResponse(status=control_pb2.Status(
                    ok=False, message="expected state RUNNING or PAUSED"))
            self.state = req.set_state
            self.topology.state = self.state
            if self.pplan is not None:
                self.pplan.topology.state = self.state
                self._publish(PHYSICAL_PLANS, self.pplan)
            if self.started:
                self._broadcast_state()
            try:  # answered once the state manager has it, so `list` agrees at once
                await asyncio.to_thread(self.statemgr.put, TOPOLOGIES, self.name,
                                        _copy(self.topology))
            except StateManagerError as exc:
                return control_pb2.ControllerResponse(status=control_pb2.Status(
                    ok=False, message=f"the state changed but could not be saved: {exc}"))
            return control_pb2.ControllerResponse(status=ok, state=self.state)
        report = control_pb2.MetricsReport(all_ready=self.started)
        component = req.metrics.component if which == "metrics" else ""
        for key in sorted(self.metrics, key=lambda k: (k[0], k[1], k[2])):
            if not component or key[0] == component:
                report.tasks.append(self.metrics[key])
        return control_pb2.ControllerResponse(status=ok, metrics=report, state=self.state)

    def link_lost(self, link: MasterLink) -> None:
        if link.stmgr is not None and self.stmgrs.get(link.stmgr, (None,))[0] is link:
            self.ready.discard(link.stmgr)
            log.warning("lost stream manager %s", link.stmgr)


def _copy(message: Any) -> Any:
    copy = type(message)()
    copy.CopyFrom(message)
    return copy
