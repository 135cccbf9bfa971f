"""The topology master: one per topology, in container 0.

It waits for every container's stream manager, builds and publishes the physical plan,
starts the spouts once every task has registered, keeps the latest metrics of every
task, and answers controller requests (activate, deactivate, metrics, update, restart a
task).

An update (`heronbridge update`) runs here, one at a time, as Heron's
UpdateTopologyManager does: pause the spouts, let the trees in flight complete (or give
up after the drain time: they fail back to their spouts), publish the new topology and
packing plan (executors and schedulers follow it: only the affected tasks and containers
stop or start), send every stream manager the new physical plan, wait until every task
of the new plan has registered, and resume the spouts.

Under effectively-once it also runs the checkpoint manager (runtime/checkpoint).
"""

from __future__ import annotations

import asyncio
import logging
import signal
import time
from collections.abc import Callable
from typing import Any

from ..addresses import MASTER, host_address, stmgr_id
from ..checkpoint import CheckpointCoordinator, CheckpointStorage
from ..checkpoint.coordinator import COMPONENT as CHECKPOINTS_COMPONENT
from ..config import TopologyConfig
from ..errors import CheckpointError, SchedulerError, StateManagerError
from ..log_levels import LEVEL_NAMES, level_number
from ..plan.codec import packing_from_proto, packing_to_proto, topology_from_proto
from ..plan.packing import repack
from ..plan.rescale import UpdateError, changes, rescaled
from ..proto import control_pb2, plans_pb2, topology_pb2
from ..statemgr import (
    PACKING_PLANS,
    PHYSICAL_PLANS,
    SAMPLING,
    STATEFUL_CHECKPOINTS,
    TMASTERS,
    TOPOLOGIES,
    NodeExistsError,
    StateManager,
)
from ..statemgr.base import Kind
from ..statemgr.follow import Follower
from ..wire import auth, tls
from ..wire.aio import FramedProtocol, cancel, spawn

log = logging.getLogger("heronbridge.runtime.topology_master")

DRAIN_SECS = "heronbridge.update.drain.secs"  # longest wait for trees in flight
READY_SECS = "heronbridge.update.ready.secs"  # longest wait for the new plan's tasks


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
    auth.STMGR: (control_pb2.RegisterStreamManagerRequest, control_pb2.StreamManagerHeartbeat,
                 control_pb2.InstanceStateStored, control_pb2.StreamManagerRestored,
                 control_pb2.ResetTopologyState),
    auth.METRICS: (control_pb2.MetricsPublish,),
    auth.CLI: (control_pb2.ControllerRequest,),
}


def placed(packing: plans_pb2.PackingPlan) -> set[tuple[str, int, int]]:
    """(component, task, container) of every task of a packing plan."""
    return {(i.component, i.task_id, c.id) for c in packing.containers for i in c.instances}


class TopologyMaster:
    def __init__(self, statemgr: StateManager, topology_name: str, secret: bytes) -> None:
        self.statemgr = statemgr
        self.secret = secret
        topology = statemgr.get(TOPOLOGIES, topology_name)
        packing = statemgr.get(PACKING_PLANS, topology_name)
        if topology is None or packing is None:
            msg = f"topology {topology_name!r}: no topology or packing plan in the state manager"
            raise SchedulerError(msg)
        self.topology: topology_pb2.Topology = topology
        self.packing: plans_pb2.PackingPlan = packing
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
        self.placed = placed(self.packing)
        self._stopping = asyncio.Event()
        self._pending: dict[Kind[Any], Any] = {}
        self._then: dict[Kind[Any], Callable[[], None]] = {}  # called once it is written
        self._wake = asyncio.Event()
        self.updating = False
        saved_sampling = statemgr.get(SAMPLING, topology_name)  # a restarted master's
        self.sampling: dict[str, float] = dict(saved_sampling.percent) if saved_sampling \
            else {}  # component -> percent of its tuples sampled
        self._all_ready = asyncio.Event()
        self.drain: dict[str, tuple[float, int]] = {}  # stmgr -> (when, trees) while paused
        self.checkpoints: CheckpointCoordinator | None = None
        if self.conf.stateful:
            saved = statemgr.get(STATEFUL_CHECKPOINTS, topology_name)
            self.checkpoints = CheckpointCoordinator(
                topology_name, self.conf.checkpoint_interval_secs, self.conf.checkpoints_kept,
                CheckpointStorage(self.conf.checkpoint_root, topology_name),
                list(saved.checkpoint_ids) if saved is not None else [], self._send_all,
                lambda message, then: self._publish(STATEFUL_CHECKPOINTS, message, then))
            self._plan_checkpoints()

    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self._stopping.set)
        bind, host = host_address(self.conf.host)
        listener = auth.listen(lambda: MasterLink(self), self.secret, set(ALLOWED),
                               "topology master")
        server = await loop.create_server(listener, bind, 0, ssl=self.tls_listen)
        port = server.sockets[0].getsockname()[1]
        listener.identity = auth.Identity.tcp(self.topology.id, MASTER, host, port)
        self.location = plans_pb2.TopologyMasterLocation(
            topology_name=self.name, topology_id=self.topology.id, host=host, server_port=port)
        self._writer = spawn(self._write_state(), "state writer")
        if not await self._claim():
            server.close()
            return 0
        if self.checkpoints is not None:
            self._checkpointer = spawn(self._checkpoint_loop(), "checkpoints")
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

    def _publish(self, kind: Kind[Any], message: Any,
                 then: Callable[[], None] | None = None) -> None:
        """Write a node without blocking the loop (ZooKeeper may be away for a while);
        writes of one node keep their order, and only the newest waiting one is written,
        then its `then()` called."""
        self._pending[kind] = _copy(message)  # the writer's thread must not see it change
        self._then.pop(kind, None)
        if then is not None:
            self._then[kind] = then
        self._wake.set()

    async def _write_state(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._pending:
                kind = next(iter(self._pending))
                message = self._pending.pop(kind)
                then = self._then.pop(kind, None)
                try:
                    await asyncio.to_thread(self.statemgr.put, kind, self.name, message)
                except StateManagerError as exc:
                    log.error("could not publish %s: %s; retrying", kind, exc)
                    if kind not in self._pending:  # else a newer one replaced it
                        self._pending[kind] = message
                        if then is not None:
                            self._then[kind] = then
                    await asyncio.sleep(1.0)
                else:
                    if then is not None:
                        then()

    def _send_all(self, message: Any) -> None:
        for link, _ in self.stmgrs.values():
            link.send(message)

    def _plan_checkpoints(self) -> None:
        """Which tasks and stream managers a checkpoint or a rollback waits for."""
        if self.checkpoints is not None:
            self.checkpoints.tasks = {i.task_id for c in self.packing.containers
                                      for i in c.instances}
            self.checkpoints.stmgrs = set(self.expected)

    async def _checkpoint_loop(self) -> None:
        checkpoints = self.checkpoints
        while checkpoints is not None:
            checkpoints.paused = self.updating
            await checkpoints.tick()
            await asyncio.sleep(0.02)

    def handle(self, link: MasterLink, message: Any) -> None:
        if not isinstance(message, ALLOWED.get(link.role or "", ())):
            log.warning("refused %s from a %s link; closing it", type(message).__name__,
                        link.role)
            if link.transport is not None:
                link.transport.close()
            return
        if isinstance(message, control_pb2.RegisterStreamManagerRequest):
            self._register(link, message)
        elif isinstance(message, control_pb2.StreamManagerHeartbeat):
            self._heartbeat(link, message)
        elif isinstance(message, control_pb2.MetricsPublish):
            for task in message.tasks:
                key = (task.component, task.task_id, task.container)
                if key[1] < 0 or key in self.placed:  # not a task an update took away
                    self.metrics[key] = task
        elif isinstance(message, control_pb2.ControllerRequest):
            spawn(self._answer(link, message), "controller request")
        elif self.checkpoints is None:
            return
        elif isinstance(message, control_pb2.InstanceStateStored):
            self.checkpoints.state_stored(message)
        elif isinstance(message, control_pb2.StreamManagerRestored):
            self.checkpoints.stmgr_restored(message)
        elif isinstance(message, control_pb2.ResetTopologyState):
            self.checkpoints.rollback(f"{message.stmgr_id}: {message.reason}")

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
        for component, percent in self.sampling.items():  # a restarted one: still sampled
            link.send(control_pb2.Sampling(component=component, percent=percent))
        log.info("registered %s (container %d, port %d)", sid, req.stmgr.container,
                 req.stmgr.data_port)
        if self.pplan is None and set(self.stmgrs) == self.expected:
            self._build_pplan()
        elif self.pplan is not None:
            self._build_pplan()  # a restarted stream manager may listen on a new port
            if self.checkpoints is not None and self.started:
                self.checkpoints.rollback(f"{sid} registered anew")
        else:
            link.send(control_pb2.RegisterStreamManagerResponse(
                status=control_pb2.Status(ok=True)))

    def _build_pplan(self) -> None:
        pplan = plans_pb2.PhysicalPlan(topology=self.topology, packing_id=self.packing.id)
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
        if hb.paused:
            self.drain[link.stmgr] = (time.monotonic(), hb.trees_pending)
        was_ready = link.stmgr in self.ready
        if hb.instances_ready and hb.packing_id == self.packing.id:
            self.ready.add(link.stmgr)
        else:
            self.ready.discard(link.stmgr)
        if self.ready == self.expected:
            self._all_ready.set()
        if self.ready == self.expected and not self.started:
            self.started = True
            log.info("every task registered: topology %r is %s", self.name,
                     topology_pb2.TopologyState.Name(self.state))
            self._broadcast_state()
            if self.checkpoints is not None:
                self.checkpoints.started()
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
            return refused(f"this master runs {self.name!r}, not {req.topology_name!r}")
        which = req.WhichOneof("action")
        if which == "update":
            return await self._update(req.update)
        if which == "restart":
            return self._restart(req.restart)
        if which == "log_level":
            return self._log_level(req.log_level)
        if which == "sampling":
            return self._sample(req.sampling)
        if which == "set_state" and self.updating:
            return refused(f"topology {self.name!r}: an update is in progress; its "
                           "spouts resume when it ends")
        if which == "set_state":
            if req.set_state not in (topology_pb2.RUNNING, topology_pb2.PAUSED):
                return refused("expected state RUNNING or PAUSED")
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
                return refused(f"the state changed but could not be saved: {exc}")
            return control_pb2.ControllerResponse(status=ok, state=self.state)
        report = control_pb2.MetricsReport(all_ready=self.started, sampling=self.sampling)
        component = req.metrics.component if which == "metrics" else ""
        for key in sorted(self.metrics, key=lambda k: (k[0], k[1], k[2])):
            if not component or key[0] == component:
                report.tasks.append(self.metrics[key])
        if self.checkpoints is not None and component in ("", CHECKPOINTS_COMPONENT):
            report.tasks.append(self.checkpoints.metrics())
        return control_pb2.ControllerResponse(status=ok, metrics=report, state=self.state)

    # -- update -------------------------------------------------------------------

    async def _update(self, req: Any) -> control_pb2.ControllerResponse:
        if self.updating:
            return refused(f"topology {self.name!r}: another update is in progress")
        if not self.started:
            return refused(f"topology {self.name!r}: not every task has registered yet; "
                           "update once it runs")
        old_plan = topology_from_proto(self.topology)
        old_packing = packing_from_proto(self.packing)
        try:
            new_plan = rescaled(old_plan, dict(req.parallelism))
            new_packing = repack(old_packing, new_plan, req.containers or None)
        except UpdateError as exc:
            return refused(str(exc))
        except Exception as exc:  # noqa: BLE001 - a plan the packing refuses, say
            return refused(f"topology {self.name!r}: cannot pack the new plan: {exc}")
        delta = changes(old_plan, old_packing, new_plan, new_packing)
        report = control_pb2.UpdateReport(
            old_packing_id=old_packing.id, new_packing_id=new_packing.id,
            started_tasks=delta.started_tasks, stopped_tasks=delta.stopped_tasks,
            added_containers=sorted(delta.added), removed_containers=sorted(delta.removed),
            packing=packing_to_proto(new_packing))
        ok = control_pb2.Status(ok=True)
        if req.dry_run or (new_packing.id == old_packing.id and not delta.started_tasks):
            return control_pb2.ControllerResponse(status=ok, update=report, state=self.state)
        self.updating = True
        try:
            await self._apply(req, report, new_packing)
        except TimeoutError:
            return refused(f"topology {self.name!r}: update to packing {new_packing.id} did "
                           f"not complete: stream managers {sorted(self.expected - self.ready)} "
                           "did not report every task of the new plan registered in time "
                           f"({READY_SECS}); the spouts run again on what is registered")
        except (StateManagerError, CheckpointError) as exc:
            return refused(f"topology {self.name!r}: update to packing {new_packing.id} did "
                           f"not complete: {exc}")
        finally:
            self.updating = False
        return control_pb2.ControllerResponse(status=ok, update=report, state=self.state)

    async def _apply(self, req: Any, report: Any, new_packing: Any) -> None:
        began = time.monotonic()
        resume = self.state
        log.info("update of %r to packing %s (%s): pausing spouts", self.name,
                 new_packing.id, req.reason or "asked")
        self._set_spouts(topology_pb2.PAUSED)
        try:
            await self._switch(req, report, new_packing, began, resume)
        finally:
            self._set_spouts(resume)  # on failure too: never leave the spouts paused
        report.paused_secs = time.monotonic() - began
        log.info("update of %r done: spouts paused %.2fs (draining %.2fs, %d trees still in "
                 "flight at the switch); started tasks %s, stopped %s", self.name,
                 report.paused_secs, report.drain_secs, report.trees_in_flight,
                 list(report.started_tasks), list(report.stopped_tasks))

    async def _switch(self, req: Any, report: Any, new_packing: Any, began: float,
                      resume: int) -> None:
        config = topology_from_proto(self.topology).config
        drain_secs = float(config.get(DRAIN_SECS, min(10.0, self.conf.message_timeout_secs)))
        if self.checkpoints is not None:  # the new tasks start from a checkpoint of now
            checkpoint_id = await self.checkpoints.checkpoint_now(drain_secs)
        else:
            report.trees_in_flight = await self._drain(began, drain_secs)
        report.drain_secs = time.monotonic() - began
        topology = _copy(self.topology)
        for comp in topology.components:
            if comp.name in req.parallelism:
                comp.parallelism = req.parallelism[comp.name]
        topology.state = resume  # what `list` shows: the user's state, not the update's
        packing = packing_to_proto(new_packing)
        # The topology first: the packing plan is what executors and schedulers follow.
        await asyncio.to_thread(self.statemgr.put, TOPOLOGIES, self.name, topology)
        await asyncio.to_thread(self.statemgr.put, PACKING_PLANS, self.name, packing)
        self.topology, self.packing = _copy(topology), packing
        self.topology.state = self.state
        self.expected = {stmgr_id(c.id) for c in packing.containers}
        if self.checkpoints is not None:
            self._plan_checkpoints()
        for sid in set(self.stmgrs) - self.expected:
            link, _ = self.stmgrs.pop(sid)
            if link.transport is not None:
                link.transport.close()
        self.ready = set()
        self._all_ready.clear()
        self.placed = placed(packing)
        for key in [k for k in self.metrics if k[1] >= 0 and k not in self.placed]:
            del self.metrics[key]  # tasks that no longer exist, or exist under another id
        self._build_pplan()
        ready_secs = float(config.get(READY_SECS, 120.0))
        await asyncio.wait_for(self._all_ready.wait(), ready_secs)
        if self.checkpoints is not None:
            await self.checkpoints.restore_now(f"update to packing {packing.id}", checkpoint_id,
                                               ready_secs)

    def _set_spouts(self, state: topology_pb2.TopologyState) -> None:
        self.state = state
        self.topology.state = state
        if self.pplan is not None:
            self.pplan.topology.state = state
            self._publish(PHYSICAL_PLANS, self.pplan)
        self._broadcast_state()

    async def _drain(self, since: float, limit: float) -> int:
        """Wait until every stream manager reports, paused since `since`, no tree in
        flight (or `limit` seconds pass); returns the trees still in flight."""
        deadline = time.monotonic() + limit
        while True:
            seen = [self.drain.get(sid, (0.0, -1)) for sid in self.expected]
            fresh = [trees for when, trees in seen if when >= since]
            if len(fresh) == len(seen) and not any(fresh):
                return 0
            if time.monotonic() >= deadline:
                return sum(max(0, trees) for _, trees in seen)
            await asyncio.sleep(0.02)

    def _restart(self, req: Any) -> control_pb2.ControllerResponse:
        owner = next((c.id for c in self.packing.containers
                      if any(i.task_id == req.task_id for i in c.instances)), None)
        link = self.stmgrs[stmgr_id(owner)][0] if owner is not None \
            and stmgr_id(owner) in self.stmgrs else None
        if link is None:
            return refused(f"topology {self.name!r}, task {req.task_id}: no such task, "
                           "or its stream manager is not connected")
        log.warning("restarting task %d: %s", req.task_id, req.reason or "asked")
        link.send(req)
        return control_pb2.ControllerResponse(status=control_pb2.Status(ok=True),
                                              state=self.state)

    def _log_level(self, req: Any) -> control_pb2.ControllerResponse:
        """To every stream manager, for its tasks of the component (they check the level)."""
        if req.component and req.component not in self.topology_components():
            return self._no_component(req.component)
        if level_number(req.level) is None:
            return refused(f"topology {self.name!r}: expected a log level "
                           f"({', '.join(LEVEL_NAMES)}) or none, received {req.level!r}")
        log.warning("log level of %s, logger %r: %s for %ss", req.component or "every component",
                    req.logger or "root", req.level or "as before", req.timeout_secs or "ever")
        for link, _ in self.stmgrs.values():
            link.send(req)
        return control_pb2.ControllerResponse(status=control_pb2.Status(ok=True),
                                              state=self.state)

    def _sample(self, req: Any) -> control_pb2.ControllerResponse:
        """Storm's debug sampling: `percent` of a component's (or every component's)
        emitted tuples, kept here for stream managers that register later."""
        components = self.topology_components()
        if req.component and req.component not in components:
            return self._no_component(req.component)
        if not 0 <= req.percent <= 100:
            return refused(f"topology {self.name!r}: expected a sampling percentage "
                           f"from 0 to 100, received {req.percent:g}")
        log.warning("sampling %g%% of the tuples %s emits", req.percent,
                    req.component or "every component")
        for component in [req.component] if req.component else components:
            if req.percent > 0:
                self.sampling[component] = req.percent
            else:
                self.sampling.pop(component, None)
            message = control_pb2.Sampling(component=component, percent=req.percent)
            for link, _ in self.stmgrs.values():
                link.send(message)
        self._publish(SAMPLING, control_pb2.SamplingPlan(percent=self.sampling))
        return control_pb2.ControllerResponse(status=control_pb2.Status(ok=True),
                                              state=self.state)

    def topology_components(self) -> list[str]:
        return sorted(c.name for c in self.topology.components)

    def _no_component(self, component: str) -> control_pb2.ControllerResponse:
        return refused(f"topology {self.name!r} has no component {component!r}; "
                       f"expected one of {', '.join(self.topology_components())}")

    def link_lost(self, link: MasterLink) -> None:
        if link.stmgr is not None and self.stmgrs.get(link.stmgr, (None,))[0] is link:
            self.ready.discard(link.stmgr)
            log.warning("lost stream manager %s", link.stmgr)


def refused(message: str) -> control_pb2.ControllerResponse:
    return control_pb2.ControllerResponse(status=control_pb2.Status(ok=False, message=message))


def _copy(message: Any) -> Any:
    copy = type(message)()
    copy.CopyFrom(message)
    return copy
