"""The local tasks: which are ours under the current plan, and their registrations.

A task registers on its link; one of this topology that the current plan does not give
us may belong to a plan that has not reached us yet, so it waits (is parked) for up to
PARK_SECS before it is refused. One that registers before the first physical plan waits
for it before it is welcomed. A new registration of a task replaces its old link (a new
life), and a spout's trees of its last life are forgotten.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import time
from collections.abc import Callable

from google.protobuf.message import Message

from ..plan.logical import LogicalPlan
from ..plan.tasks import TaskLayout
from ..proto import control_pb2
from .links import InstanceLink, close
from .router import Router

log = logging.getLogger("heronbridge.runtime.stream_manager")

PARK_SECS = 10.0  # a task that registers before the plan that has it waits this long


class Registry:
    def __init__(self, name: str, topology_id: str, router: Router,
                 welcome: Callable[[InstanceLink], None], changed: Callable[[], None],
                 spouts_paused: Callable[[], bool]) -> None:
        self.name = name
        self.topology_id = topology_id
        self.router = router
        self.welcome = welcome  # a registered task hears the plan (once there is one)
        self.changed = changed  # the registered tasks changed: routes and readiness
        self.spouts_paused = spouts_paused
        self.instances: dict[int, InstanceLink] = {}
        self.waiting: list[InstanceLink] = []  # registered before the physical plan came
        self.parked: dict[InstanceLink, tuple[control_pb2.RegisterInstanceRequest, float]] = {}
        self.started: set[int] = set()  # local tasks whose component is set up
        self.local_tasks: set[int] = set()
        self.local_spouts: set[int] = set()
        self.task_component: dict[int, str] = {}
        self.has_pplan = False

    def place(self, plan: LogicalPlan, local_tasks: set[int]) -> None:
        """Which tasks are ours, and which of them are spouts, under the current plan."""
        layout = TaskLayout.of(plan)
        self.task_component = layout.task_component
        self.local_tasks = local_tasks
        spouts = {t for t, c in layout.task_component.items()
                  if c in plan.components and plan.components[c].is_spout}
        self.local_spouts = self.local_tasks & spouts
        self.router.place(self.local_spouts, spouts <= self.local_tasks)

    def ready(self, registered_will_do: bool) -> bool:
        """Every local task registered and (unless registered will do) set up."""
        return set(self.instances) == self.local_tasks and (
            registered_will_do or self.started >= self.local_tasks)

    def routable(self, acking: bool) -> dict[int, InstanceLink]:
        """The local tasks frames may be written to. Under at-least-once a task is routed
        to once its component is set up: until then its frames are held (undelivered.py),
        so that the trees they carry do not time out in its socket while it imports and
        opens."""
        if not acking:
            return dict(self.instances)
        return {t: link for t, link in self.instances.items() if t in self.started}

    def register(self, link: InstanceLink, req: control_pb2.RegisterInstanceRequest) -> bool:
        """Welcome (or park, or refuse) a task's registration. True when it replaced a
        link of the task that was still open here: its last life ended without this
        stream manager seeing the link close (a spout's is not read while spouts are
        paused, so its end goes unseen), which is a loss as a disconnect is."""
        task = req.task_id
        if req.topology_id == self.topology_id and task not in self.local_tasks \
                and self.parked.get(link, (None, time.monotonic()))[1] + PARK_SECS \
                > time.monotonic():
            # Perhaps a task of a plan that has not reached us yet: wait for it.
            self.parked.setdefault(link, (req, time.monotonic()))
            asyncio.get_running_loop().call_later(PARK_SECS, self._unpark, link)
            return False
        self.parked.pop(link, None)
        if req.topology_id != self.topology_id or task not in self.local_tasks:
            reason = (f"{self.name}: task {task} of topology {req.topology_id!r} does not "
                      f"belong here; expected a task among {sorted(self.local_tasks)} of "
                      f"{self.topology_id!r}")
            link.send(control_pb2.RegisterInstanceResponse(
                status=control_pb2.Status(ok=False, message=reason)))
            close(link)
            return False
        old = self.instances.get(task)
        replaced = False
        if old is not None and old is not link:
            replaced = True
            log.warning("%s: task %d registered anew while its last link was open; that "
                        "life is over", self.name, task)
            close(old)
        link.task = task
        link.pid = req.pid
        link.component = self.task_component.get(task)
        link.cause = ("instance", task)
        link.is_spout = task in self.local_spouts
        if link.is_spout:  # a new life: the trees of the last are nobody's now
            self.router.forget_spout(task)
        self.instances[task] = link
        self.started.discard(task)  # this incarnation has not set its component up
        if link.is_spout and self.spouts_paused() and link.transport is not None:
            link.transport.pause_reading()
        if self.has_pplan:
            self.welcome(link)
        else:
            self.waiting.append(link)
        self.changed()
        return replaced

    def _unpark(self, link: InstanceLink) -> None:
        parked = self.parked.get(link)
        if parked is not None and link.transport is not None \
                and not link.transport.is_closing():
            self.register(link, parked[0])  # refused now: its wait is over
        else:
            self.parked.pop(link, None)

    def plan_came(self, first: bool) -> None:
        """A physical plan: those that waited for the first are welcomed; parked tasks
        that it makes ours register."""
        self.has_pplan = True
        if first:
            waiting, self.waiting = self.waiting, []
            for link in waiting:
                self.welcome(link)
        for link, (req, _) in list(self.parked.items()):
            if req.task_id in self.local_tasks:
                del self.parked[link]
                self.register(link, req)

    def replan(self, plan: LogicalPlan, mine: dict[int, str],
               packing_id: str) -> list[InstanceLink]:
        """An update: `mine` (task -> component) are our tasks under the new plan. Returns
        the links of the tasks it does not give us, or gives us under another identity, to
        let go; their executor stops them. Their links stay open until it does: a task that
        lost its stream manager would exit and be restarted, under its old identity, before
        the executor saw the new plan."""
        let_go = [link for task, link in self.instances.items()
                  if mine.get(task) != link.component]
        self.place(plan, set(mine))
        for link in let_go:
            log.info("%s: task %d is not ours under packing %s; letting it go", self.name,
                     link.task, packing_id)
        log.info("%s: packing %s, local tasks %s", self.name, packing_id,
                 sorted(self.local_tasks))
        return let_go

    def started_task(self, link: InstanceLink) -> bool:
        task = link.task
        if task is not None and self.instances.get(task) is link:
            self.started.add(task)
            return True
        return False

    def gone(self, link: InstanceLink) -> bool:
        """A link closed; True if it was a registered task's (now forgotten)."""
        self.parked.pop(link, None)
        if link.task is None or self.instances.get(link.task) is not link:
            return False
        del self.instances[link.task]
        if link in self.waiting:
            self.waiting.remove(link)
        if link.is_spout:
            self.router.forget_spout(link.task)
        self.started.discard(link.task)
        log.warning("%s: task %d disconnected", self.name, link.task)
        return True

    def tell(self, message: Message, spouts: bool = False) -> None:
        """Send every local task (or spout) that has its welcome a control message."""
        for link in self.instances.values():
            if (link.is_spout or not spouts) and link not in self.waiting:
                link.send(message)

    def pause_spouts(self, paused: bool) -> None:
        """Stop (or start again) reading what the local spouts send."""
        for link in self.instances.values():
            transport = link.transport
            if link.is_spout and transport is not None and not transport.is_closing():
                if paused:
                    transport.pause_reading()
                else:
                    transport.resume_reading()

    def restart(self, req: control_pb2.RestartTask) -> None:
        """End a local task (the health manager asked: a slow instance); its executor
        starts it again as it does any task that exits."""
        link = self.instances.get(req.task_id)
        if link is None or not link.pid:
            log.warning("%s: asked to restart task %d, which is not connected here",
                        self.name, req.task_id)
            return
        log.warning("%s: restarting task %d (pid %d): %s", self.name, req.task_id, link.pid,
                    req.reason)
        try:
            os.kill(link.pid, signal.SIGTERM)
        except (ProcessLookupError, PermissionError) as exc:
            log.warning("%s: cannot signal task %d: %s", self.name, req.task_id, exc)
