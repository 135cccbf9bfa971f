"""The stream manager: one per container, the only hop between tasks.

This module wires its parts together, as Heron split its own:

- router.py: the data path without sockets (routing on the 9-byte header, the XOR
  tracker of the local spouts, the policy for frames whose destination is down);
- links.py: the connections to local tasks and peers, and the dialling of peers;
- registry.py: which local tasks are ours and their registrations;
- backpressure.py: who causes it, and pausing the local spouts;
- rollback.py: effectively-once (checkpoints, rollbacks, losses reported);
- master_session.py: registration with the topology master and heartbeats;
- metrics.py: what it reports to its metrics manager.

A new physical plan (an update) is applied live: local tasks the new plan moved or
dropped are let go, new ones are accepted when they register, routes switch, and peers
are dialled.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import time
from pathlib import Path

from google.protobuf.message import Message

from .. import logfiles, profiles
from ..addresses import host_address, stmgr_address, stmgr_id
from ..config import TopologyConfig
from ..errors import SchedulerError
from ..plan.codec import packing_from_proto, topology_from_proto
from ..proto import control_pb2, plans_pb2, topology_pb2
from ..statemgr import PACKING_PLANS, TOPOLOGIES, StateManager
from ..wire import tls
from ..wire.aio import cancel, every, spawn
from . import links, metrics
from .backpressure import Backpressure
from .links import InstanceLink, Link, Peers, is_open
from .master_session import MasterSession, Status
from .registry import Registry
from .rollback import Rollback
from .router import Endpoint, Outgoing, Router

log = logging.getLogger("heronbridge.runtime.stream_manager")
MAX_LOG_REPLY = 8 << 20  # bytes of logs in one reply, over all its tasks


class StreamManager:
    def __init__(self, statemgr: StateManager, topology_name: str, container: int,
                 secret: bytes, logs: Path = Path("logs")) -> None:
        topology = statemgr.get(TOPOLOGIES, topology_name)
        packing = statemgr.get(PACKING_PLANS, topology_name)
        if topology is None or packing is None:
            msg = f"topology {topology_name!r}: no topology or packing plan in the state manager"
            raise SchedulerError(msg)
        self.secret = secret
        self.topology_id = topology.id
        self.plan = topology_from_proto(topology)
        self.name = self.plan.name
        conf = self.conf = TopologyConfig.read(self.plan.config, self.name)
        self.bp_limits = (conf.bp_high_bytes, conf.bp_low_bytes)
        self.tls_listen, tls_dial = tls.contexts(conf.tls, self.name)
        self.container = container
        self.logs = logs.resolve()  # the container's task logs, which `read_logs` serves
        self.id = stmgr_id(container)
        packing_plan = packing_from_proto(packing)
        self.packing_id = packing_plan.id
        self.pplan: plans_pb2.PhysicalPlan | None = None
        self.state: topology_pb2.TopologyState | None = None
        self.sampling: dict[str, control_pb2.Sampling] = {}  # component -> the latest said
        self.owner: dict[int, str] = {}  # task -> stream manager id
        self._stopping = asyncio.Event()
        # The parts call back into each other: a lambda reaches a part made after it.
        self.router = Router.of(self.id, conf, self.name, self._control,
                                lambda held: self.backpressure.held(held))  # noqa: PLW0108
        self.registry = Registry(self.id, self.topology_id, self.router, self._welcome,
                                 self._tasks_changed, lambda: self.backpressure.spouts_paused)
        self.backpressure = Backpressure(self.id, self._announce, self.registry.pause_spouts)
        self.registry.place(self.plan, {i.task_id for c in packing_plan.containers
                                        if c.id == container for i in c.instances})
        self.master = MasterSession(self.id, self.name, self.topology_id, statemgr, secret,
                                    tls_dial, conf.heartbeat_interval_secs,
                                    self._registration, self._status, self._from_master)
        self.peers = Peers(self, secret, tls_dial, self._greetings, self._tasks_changed)
        self.rollback = Rollback(self.id, conf.stateful, self.router, self.registry.tell,
                                 self.master.send, self.peers.send,
                                 lambda: self.registry.local_tasks, self._stopping.is_set)

    # -- lifecycle --------------------------------------------------------------

    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self._stopping.set)
        bind, self.host = host_address(self.conf.host)
        servers = await links.serve(self, self.secret,
                                    stmgr_address(self.topology_id, self.container), bind,
                                    self.host, self.tls_listen)
        self.data_port = servers[2]
        log.info("%s of topology %r: local tasks %s, peers reach it at %s:%d", self.id,
                 self.name, sorted(self.registry.local_tasks), self.host, self.data_port)
        tasks = [spawn(self.master.run(), "master session"),
                 spawn(metrics.publish(self.topology_id, self.container, self.secret,
                                       self.conf.metrics_interval_secs, self.metrics), "metrics")]
        if self.conf.acking:
            # Held frames given up and their trees failed when their time comes; with
            # timeouts, a root expires between T and T * n/(n-1) after it was emitted.
            timeout, buckets = self.conf.message_timeout_secs, self.conf.xor_buckets
            tasks.append(spawn(every(min(0.1, timeout / 10), lambda: self._write(
                self.router.settle(time.monotonic()))), "undelivered frames"))
            if self.conf.message_timeouts:
                tasks.append(spawn(every(timeout / (buckets - 1), lambda: self._write(
                    self.router.expire())), "expiry"))
        await self._stopping.wait()
        for task in [*tasks, *self.peers.tasks()]:
            await cancel(task)
        servers[0].close()
        servers[1].close()
        for link in list(self.registry.instances.values()):
            links.close(link)
        log.info("%s: stopped", self.id)
        return 0

    def metrics(self) -> control_pb2.TaskMetrics:
        return metrics.sample(self.container, self.router, self.backpressure,
                              self.registry.instances, list(self.peers.links.values()))

    # -- the data path (links.Hub) ----------------------------------------------

    def on_frames(self, source: Link, data: bytes, found: list) -> None:
        self._write(self.router.receive(source, data, found))

    def undeliverable(self, chunks: list) -> None:
        self.router.undeliverable(chunks)

    @staticmethod
    def _write(outgoing: Outgoing) -> None:
        for link, chunks in outgoing.items():
            link.write_chunks(chunks)  # type: ignore[attr-defined]

    @staticmethod
    def _control(source: Endpoint, message: Message) -> None:
        source.message_received(message)  # type: ignore[attr-defined]

    def _rebuild_routes(self) -> None:
        peers: dict[str, Endpoint] = dict(self.peers.links)
        self.router.route = {**self.registry.routable(self.conf.acking), **{
            task: peers[owner] for task, owner in self.owner.items() if owner in peers}}

    def _release(self) -> None:
        """Deliver the frames held for tasks that can be reached again."""
        if self.pplan is not None:
            self._write(self.router.release(
                lambda link: isinstance(link, Link) and is_open(link)
                and link not in self.registry.waiting))

    def _tasks_changed(self) -> None:
        self._rebuild_routes()
        self._release()
        self.master.heartbeat()

    # -- what links, the master and the parts report ------------------------------

    def instance_message(self, link: InstanceLink, message: Message) -> None:
        if isinstance(message, control_pb2.RegisterInstanceRequest):
            if self.registry.register(link, message) and link.task is not None:
                self._task_lost(link.task, "registered anew")
        elif link.task is None:
            return
        elif isinstance(message, control_pb2.InstanceStarted):
            if self.registry.started_task(link):
                self._tasks_changed()
        elif isinstance(message, control_pb2.InstanceStateStored):
            self.master.send(message)
        elif isinstance(message, control_pb2.InstanceRestored):
            self.rollback.instance_restored(link, link.task, message)

    def instance_gone(self, link: InstanceLink) -> None:
        if self.registry.gone(link) and link.task is not None:
            self._rebuild_routes()
            self._task_lost(link.task, "disconnected")

    def _task_lost(self, task: int, how: str) -> None:
        """A task's life ended: what it held is lost (effectively once: a rollback)."""
        self.rollback.forget(task)
        self.rollback.lost(f"task {task} {how}")
        self.master.heartbeat()

    def profile(self, link: Link, request: control_pb2.ProfileRequest) -> None:
        spawn(self._profile(link, request), f"profile of task {request.task_id}")

    async def _profile(self, link: Link, request: control_pb2.ProfileRequest) -> None:
        """py-spy (or /proc) on a local task, off the event loop: a flame graph samples
        for seconds, while tuples go on flowing."""
        instance = self.registry.instances.get(request.task_id)
        reply = control_pb2.ProfileResponse(status=control_pb2.Status(ok=True))
        if instance is None or not instance.pid:
            reply.status.ok = False
            reply.status.message = (f"topology {self.name!r}: task {request.task_id} is not "
                                    f"running in container {self.container}")
        else:
            reply.pid = instance.pid
            try:
                reply.body = await asyncio.to_thread(profiles.take, instance.pid,
                                                     request.kind, request.seconds)
            except profiles.ProfileError as exc:
                reply.status.ok = False
                reply.status.message = (f"topology {self.name!r}, task {request.task_id}: "
                                        f"{exc}")
        if is_open(link):
            link.send(reply)

    def read_logs(self, link: Link, request: control_pb2.LogRequest) -> None:
        spawn(self._read_logs(link, request), "log request")

    async def _read_logs(self, link: Link, request: control_pb2.LogRequest) -> None:
        """New bytes of this container's task logs (or sampled tuples), each file chosen
        by its task id in the plan (nothing of the request is joined to a path), read off
        the event loop."""
        reply = control_pb2.LogResponse(status=control_pb2.Status(ok=True))
        strangers = sorted({c.task_id for c in request.cursors}
                           - self.registry.local_tasks)
        if strangers:
            reply.status.ok = False
            reply.status.message = (f"topology {self.name!r}: expected tasks of container "
                                    f"{self.container} ({sorted(self.registry.local_tasks)})"
                                    f", received {strangers}")
        else:
            bound = min(request.max_bytes or logfiles.MAX_READ,
                        MAX_LOG_REPLY // max(1, len(request.cursors)))
            reply.chunks.extend(await asyncio.to_thread(self._log_chunks, request, bound))
        if is_open(link):
            link.send(reply)

    def _log_chunks(self, request: control_pb2.LogRequest,
                    bound: int) -> list[control_pb2.LogChunk]:
        chunks = []
        named = logfiles.events_name if request.file == control_pb2.SAMPLED_EVENTS \
            else logfiles.task_log_name
        for cursor in request.cursors:
            name = named(cursor.task_id, self.registry.task_component[cursor.task_id])
            path = self.logs / name
            read = logfiles.read_log(path, cursor.offset, bound) \
                if path.parent == self.logs else None  # a component name with a "/"
            chunk = control_pb2.LogChunk(task_id=cursor.task_id, missing=read is None,
                                         offset=max(cursor.offset, 0))
            if read is not None:
                chunk.offset, chunk.data = read
            chunks.append(chunk)
        return chunks

    def _from_master(self, message: Message) -> None:
        if isinstance(message, (control_pb2.RegisterStreamManagerResponse,
                                control_pb2.NewPhysicalPlan)):
            if message.HasField("pplan"):
                self.apply_pplan(message.pplan)
        elif isinstance(message, control_pb2.TopologyStateChange):
            self.set_state(message.state)
        elif isinstance(message, control_pb2.RestartTask):
            self.registry.restart(message)
        elif isinstance(message, control_pb2.LogLevel):
            self.registry.tell(message)  # each task checks the component
        elif isinstance(message, control_pb2.Sampling):
            self.sampling[message.component] = message  # a task (re)starting hears it too
            self.registry.tell(message)
        else:  # effectively-once: checkpoints and rollbacks
            self.rollback.from_master(message)

    # -- the master session -----------------------------------------------------

    def _registration(self) -> control_pb2.RegisterStreamManagerRequest:
        return control_pb2.RegisterStreamManagerRequest(
            topology_id=self.topology_id, task_ids=sorted(self.registry.local_tasks),
            stmgr=plans_pb2.StreamManagerInfo(id=self.id, container=self.container,
                                              host=self.host, data_port=self.data_port,
                                              pid=os.getpid()))

    def _status(self) -> Status:
        # Under effectively-once the first rollback builds the components: registered is
        # ready. Otherwise a task is ready once its component is set up.
        ready = self.pplan is not None and self.registry.ready(self.conf.stateful) \
            and self.peers.all_connected()
        paused = self.state == topology_pb2.PAUSED
        return Status(ready, self.packing_id, paused, len(self.router.tracker) if paused else 0)

    # -- plans, state and tasks -------------------------------------------------

    def apply_pplan(self, pplan: plans_pb2.PhysicalPlan) -> None:
        first = self.pplan is None
        if pplan.packing_id and pplan.packing_id != self.packing_id:
            self._replan(pplan)
        self.pplan = pplan
        self.owner = {i.task_id: i.stmgr_id for i in pplan.instances}
        for gone in self.peers.follow(pplan):
            self.backpressure.peer(gone, False)
        self.router.follow_plan(frozenset(self.owner) | self.registry.local_tasks)
        self.registry.plan_came(first)
        self._tasks_changed()

    def _replan(self, pplan: plans_pb2.PhysicalPlan) -> None:
        """An update: the new topology and our tasks in it (registry.replan)."""
        self.plan = topology_from_proto(pplan.topology)
        self.packing_id = pplan.packing_id
        mine = {i.task_id: i.component for i in pplan.instances if i.stmgr_id == self.id}
        for link in self.registry.replan(self.plan, mine, self.packing_id):
            self.instance_gone(link)

    def set_state(self, state: topology_pb2.TopologyState) -> None:
        was, self.state = self.state, state
        if state == topology_pb2.PAUSED and was != state:
            spawn(self.master.report_drain(lambda: self.state), "drain report")
        log.info("%s: topology state %s", self.id, topology_pb2.TopologyState.Name(state))
        self.registry.tell(control_pb2.TopologyStateChange(state=state), spouts=True)

    def _welcome(self, link: InstanceLink) -> None:
        link.send(control_pb2.RegisterInstanceResponse(status=control_pb2.Status(ok=True),
                                                       pplan=self.pplan))
        if link.is_spout and self.state is not None:
            link.send(control_pb2.TopologyStateChange(state=self.state))
        if self.rollback.restore is not None:  # it restores too; the master hears of the loss
            link.send(self.rollback.restore)
        sampling = self.sampling.get(link.component or "")
        if sampling is not None and sampling.percent > 0:
            link.send(sampling)

    # -- peers and backpressure -------------------------------------------------

    def _greetings(self) -> list[Message]:
        hello = control_pb2.StreamManagerHello(topology_id=self.topology_id, stmgr_id=self.id)
        paused = [control_pb2.BackPressureNotice(stmgr_id=self.id, active=True)]
        # A peer that restarted pauses its spouts too.
        return [hello, *(paused if self.backpressure.local_causes else []),
                *self.rollback.greetings()]

    def _announce(self, active: bool) -> None:
        self.peers.send(control_pb2.BackPressureNotice(stmgr_id=self.id, active=active))
