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

from ..addresses import LOOPBACK, stmgr_id
from ..config import TopologyConfig
from ..errors import SchedulerError
from ..plan.codec import topology_from_proto
from ..proto import control_pb2, plans_pb2, topology_pb2
from ..state import PACKING_PLANS, PHYSICAL_PLANS, TMASTERS, TOPOLOGIES, StateManager
from ..wire.aio import FramedProtocol

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


class TopologyMaster:
    def __init__(self, state: StateManager, topology_name: str) -> None:
        self.statemgr = state
        self.topology = state.get(TOPOLOGIES, topology_name)
        self.packing = state.get(PACKING_PLANS, topology_name)
        if self.topology is None or self.packing is None:
            msg = f"topology {topology_name!r}: no topology or packing plan in the state manager"
            raise SchedulerError(msg)
        self.name = topology_name
        self.conf = TopologyConfig.read(topology_from_proto(self.topology).config, self.name)
        self.expected = {stmgr_id(c.id) for c in self.packing.containers}
        self.stmgrs: dict[str, tuple[MasterLink, plans_pb2.StreamManagerInfo]] = {}
        self.ready: set[str] = set()
        self.last_heartbeat: dict[str, float] = {}
        self.pplan: plans_pb2.PhysicalPlan | None = None
        self.state = self.topology.state or topology_pb2.RUNNING
        self.started = False
        self.metrics: dict[tuple[str, int, int], control_pb2.TaskMetrics] = {}
        self._stopping = asyncio.Event()

    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self._stopping.set)
        server = await loop.create_server(lambda: MasterLink(self), LOOPBACK, 0)
        port = server.sockets[0].getsockname()[1]
        self.statemgr.put(TMASTERS, self.name, plans_pb2.TopologyMasterLocation(
            topology_name=self.name, topology_id=self.topology.id, host=LOOPBACK,
            server_port=port))
        log.info("topology master of %r on port %d, expecting %s", self.name, port,
                 sorted(self.expected))
        await self._stopping.wait()
        server.close()
        location = self.statemgr.get(TMASTERS, self.name)
        if location is not None and location.server_port == port:
            self.statemgr.delete(TMASTERS, self.name)
        return 0

    def handle(self, link: MasterLink, message: Any) -> None:
        if isinstance(message, control_pb2.RegisterStreamManagerRequest):
            self._register(link, message)
        elif isinstance(message, control_pb2.StreamManagerHeartbeat):
            self._heartbeat(link, message)
        elif isinstance(message, control_pb2.MetricsPublish):
            for task in message.tasks:
                self.metrics[(task.component, task.task_id, task.container)] = task
        elif isinstance(message, control_pb2.ControllerRequest):
            link.send(self._control(message))

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
        self.statemgr.put(PHYSICAL_PLANS, self.name, pplan)
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

    def _control(self, req: Any) -> control_pb2.ControllerResponse:
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
            self.statemgr.put(TOPOLOGIES, self.name, self.topology)
            if self.pplan is not None:
                self.pplan.topology.state = self.state
                self.statemgr.put(PHYSICAL_PLANS, self.name, self.pplan)
            if self.started:
                self._broadcast_state()
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
