"""Every task of a topology in this process, without sockets or stream managers.

Each task is a Task attached to the plan, with its real collector, decoders
and spout bookkeeping; what a task flushes goes through the stream manager's own router
(routes, XOR tracking, the drop policy) and what comes out goes straight to the tasks it
names. Tests use it to check components without starting processes, and benchmarks to
measure the per-tuple path with nothing else on it:

    topo = InMemoryTopology(plan)
    topo.run(spout_calls=1000)          # each spout task: up to 1000 next_tuple calls
    topo.tasks[task].counts             # what each task did
"""

from __future__ import annotations

import time
from functools import partial
from typing import cast

from .config import TopologyConfig
from .errors import ComponentError
from .instance.bolt_driver import BoltDriver
from .instance.emitter import SpoutEmitter
from .instance.spout_driver import settle
from .instance.task import Task
from .plan.logical import LogicalPlan
from .plan.tasks import TaskLayout
from .stream_manager.router import Endpoint, Router
from .wire import frames


class _TaskEnd:
    """A task as the router sees it."""

    __slots__ = ("epoch", "task")

    def __init__(self, task: int) -> None:
        self.task = task
        self.epoch = 0

    def peer_name(self) -> str:
        return f"task {self.task}"


class InMemoryTopology:
    def __init__(self, plan: LogicalPlan, seed: int = 0) -> None:
        layout = TaskLayout.of(plan)
        local = frozenset(layout.task_component)
        conf = TopologyConfig.read(plan.config, plan.name)
        self.plan = plan
        self.router = Router.of(f"{plan.name}-in-memory", conf, plan.name,
                                lambda source, message: None)
        self.router.gated = False  # no rollbacks here
        self.in_flight: list[tuple[_TaskEnd, bytes]] = []  # sent and not yet routed
        self.tasks: dict[int, Task] = {}
        self.spouts: list[Task] = []
        self._bolts: dict[int, BoltDriver] = {}
        for task, component in sorted(layout.task_component.items()):
            if component not in plan.components:  # Storm's reserved tasks (__acker)
                continue
            one = Task(f"{plan.name}-in-memory", task, 0, "", "", secret=b"")
            one.attach(plan, local, seed=seed + task)
            self.attached(one)
            end = _TaskEnd(task)
            one.send = partial(self._sent, end)
            if getattr(one.user, "owns_loop", False):
                msg = (f"{one.loc()}: the in-memory topology calls components; this one "
                       "owns its loop (pull.py), expected one the runtime's drivers call")
                raise ComponentError(msg)
            one.start_component()
            self.started(one)
            self.tasks[task] = one
            self.router.route[task] = end
            if one.is_spout:
                self.spouts.append(one)
                one.active = True
                one.user.activate()
            else:
                self._bolts[task] = BoltDriver(one)
        self.router.place([t.task for t in self.spouts], True)

    def attached(self, task: Task) -> None:
        """A task's component and collector are built, not yet opened or prepared:
        a subclass may wrap the collector here (the component binds it when it starts)."""

    def started(self, task: Task) -> None:
        """A task's component was opened or prepared."""

    def _sent(self, source: _TaskEnd, out: list[bytes]) -> None:
        self.in_flight.append((source, b"".join(out)))

    def run(self, spout_calls: int, batch: int = 100) -> None:
        """Call each spout's next_tuple `spout_calls` times, `batch` calls per flush, and
        deliver everything that follows until the topology is quiet."""
        done = 0
        while done < spout_calls:
            n = min(batch, spout_calls - done)
            for spout in self.spouts:
                em = cast("SpoutEmitter", spout.emitter)
                em.now = time.monotonic()
                next_tuple = spout.user.next_tuple
                for _ in range(n):
                    next_tuple()
                if em.ack_now:  # at-most-once: acked as soon as emitted
                    acked, em.ack_now = em.ack_now, []
                    for msg_id in acked:
                        spout.user.ack(msg_id)
                spout.flush()
            done += n
            self.drain()

    def drain(self) -> None:
        """Route frames until no task has anything more to send."""
        while self.in_flight:
            batch, self.in_flight = self.in_flight, []
            delivered: dict[Endpoint, list] = {}
            for source, data in batch:
                found, _ = frames.split_frames(data)
                for end, chunks in self.router.receive(source, data, found).items():
                    delivered.setdefault(end, []).extend(chunks)
            for end, chunks in delivered.items():
                self._deliver(cast("_TaskEnd", end).task, b"".join(chunks))

    def _deliver(self, task: int, data: bytes) -> None:
        found, _ = frames.split_frames(data)
        one = self.tasks[task]
        if one.is_spout:  # acked, failed and expired trees
            settle(one, data, found)
        else:
            execute = self._bolts[task].execute_frame
            for kind, _dest, start, end in found:
                if kind == frames.DATA:
                    execute(data, start, end)
                    one.flush()
        one.flush()

    def close(self) -> None:
        for one in self.tasks.values():
            one.stop_component()


def sink_counts(topo: InMemoryTopology) -> dict[str, int]:
    """Input tuples executed per component."""
    out: dict[str, int] = {}
    for one in topo.tasks.values():
        out[one.component] = out.get(one.component, 0) + one.counts["execute-count"]
    return out

