"""Every task of a topology in this process, without sockets or stream managers.

Each task is a Task attached to the plan, with its real collector and decoders, driven by
the step its process would run (instance/step.py: the in-flight window, bursts and
pacing, backpressure, ticks and wake-ups); what a task flushes goes through the stream
manager's own router (routes, XOR tracking, timeouts, the drop policy) and what comes out
goes straight to the tasks it names. Time is a clock the caller gives (the process's own
by default; heronbridge.testing's is simulated): when no spout may call next_tuple, the
topology waits for the steps' next timer. Tests use it to check components without
starting processes, and benchmarks to measure the per-tuple path with nothing else on it:

    topo = InMemoryTopology(plan)
    topo.run(spout_calls=1000)          # each spout task: 1000 next_tuple calls
    topo.steps[task].counts             # what each task did
"""

from __future__ import annotations

import math
import time
from typing import cast

from .config import TopologyConfig
from .errors import ComponentError
from .instance.bolt_step import BoltStep
from .instance.emitter import SpoutEmitter
from .instance.spout_step import SpoutStep
from .instance.step import Clock, TaskStep
from .instance.task import Task
from .plan.logical import LogicalPlan
from .plan.tasks import TaskLayout
from .proto import control_pb2, topology_pb2
from .stream_manager.router import Endpoint, Router
from .wire import frames


class _TaskEnd:
    """A task as the router sees it, and the link its task sends on."""

    __slots__ = ("epoch", "out_bytes", "task", "topology")

    def __init__(self, task: int, topology: InMemoryTopology) -> None:
        self.task = task
        self.topology = topology
        self.epoch = 0
        self.out_bytes = 0  # routed at once: nothing waits to be sent

    def peer_name(self) -> str:
        return f"task {self.task}"

    def send(self, out: list[bytes]) -> None:
        self.topology.in_flight.append((self, b"".join(out)))


class InMemoryTopology:
    def __init__(self, plan: LogicalPlan, seed: int = 0, clock: Clock = time.monotonic) -> None:
        layout = TaskLayout.of(plan)
        local = frozenset(layout.task_component)
        conf = TopologyConfig.read(plan.config, plan.name)
        self.plan = plan
        self.clock = clock
        self.router = Router.of(f"{plan.name}-in-memory", conf, plan.name,
                                lambda source, message: None)
        self.router.gated = False  # no rollbacks here
        # The stream manager's timeout buckets rotate this often.
        self.rotate_every = (conf.message_timeout_secs / (conf.xor_buckets - 1)
                             if conf.acking and conf.message_timeouts else math.inf)
        self.next_rotation = clock() + self.rotate_every
        self.in_flight: list[tuple[_TaskEnd, bytes]] = []  # sent and not yet routed
        self.tasks: dict[int, Task] = {}
        self.steps: dict[int, TaskStep] = {}
        self.spouts: list[Task] = []
        running = control_pb2.TopologyStateChange(state=topology_pb2.RUNNING)
        for task, component in sorted(layout.task_component.items()):
            if component not in plan.components:  # Storm's reserved tasks (__acker)
                continue
            one = Task(f"{plan.name}-in-memory", task, 0, "", "", secret=b"")
            one.attach(plan, local, seed=seed + task)
            self.attached(one)
            end = _TaskEnd(task, self)
            one.link = end
            if getattr(one.user, "owns_loop", False):
                msg = (f"{one.loc()}: the in-memory topology calls components; this one "
                       "owns its loop (pull.py), expected one the runtime's drivers call")
                raise ComponentError(msg)
            one.start_component()
            self.started(one)
            self.tasks[task] = one
            self.router.route[task] = end
            step = self.steps[task] = SpoutStep(one, clock) if one.is_spout \
                else BoltStep(one, clock)
            step.resume()
            if one.is_spout:
                self.spouts.append(one)
                step.control(running)  # as its stream manager says once all tasks started
        self.router.place([t.task for t in self.spouts], True)

    def attached(self, task: Task) -> None:
        """A task's component and collector are built, not yet opened or prepared:
        a subclass may wrap the collector here (the component binds it when it starts)."""

    def started(self, task: Task) -> None:
        """A task's component was opened or prepared."""

    def spout_step(self, task: Task) -> SpoutStep:
        return cast("SpoutStep", self.steps[task.task])

    def run(self, spout_calls: int, batch: int = 100) -> None:
        """Until each spout's step has called its next_tuple `spout_calls` times (at most
        `batch` calls per flush, fewer where its policy ends a burst sooner), delivering
        everything that follows until the topology is quiet."""
        made = dict.fromkeys((s.task for s in self.spouts), 0)
        while True:
            left = {t: spout_calls - n for t, n in made.items() if n < spout_calls}
            if not left:
                return
            progressed = False
            for spout in self.spouts:
                if spout.task in left:
                    calls = self.burst(spout, min(batch, left[spout.task]))
                    made[spout.task] += calls
                    progressed |= calls > 0
            self.drain()
            if not progressed:  # every spout waits: for acks, or for its window's timer
                self.wait_for_timers()

    def burst(self, spout: Task, most: float) -> int:
        """One turn of a spout's step: a burst of at most `most` next_tuple calls if its
        policy allows one now, and its output; returns the calls made."""
        step = self.spout_step(spout)
        now = self.clock()
        step.wait(now)
        calls = step.run_burst(most)
        step.done(now)
        return calls

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
        """A task's step takes what was routed to it (acks and fails for a spout, input
        for a bolt), and ends its turn."""
        found, _ = frames.split_frames(data)
        step = self.steps[task]
        step.received(data, found)
        step.done(self.clock())

    def next_timer(self) -> float:
        """When a step or the router's timeouts next have something to do."""
        now = self.clock()
        return min(self.next_rotation, *(step.due(now) for step in self.steps.values()))

    def fire(self, now: float) -> None:
        """What is due at `now`: bolts' ticks and wake-ups, trees that timed out."""
        for step in self.steps.values():
            if isinstance(step, BoltStep) and step.due(now) <= now:
                self.timer(step, now)
        if self.next_rotation <= now:
            self.next_rotation += self.rotate_every
            for end, chunks in self.router.expire().items():
                self._deliver(cast("_TaskEnd", end).task, b"".join(chunks))
        self.drain()

    def timer(self, step: BoltStep, now: float) -> None:
        """A bolt's turn for its timers (a tick, a wake-up) with no input."""
        step.done(now)

    def wait_for_timers(self) -> None:
        """No spout may call next_tuple now: wait for the next timer, and fire it."""
        when = self.next_timer()
        if when == math.inf:
            held = {s.task: len(cast("SpoutEmitter", s.emitter).pending) for s in self.spouts}
            msg = (f"topology {self.plan.name!r}: every spout waits and nothing is due to "
                   f"free it (trees pending per spout task: {held}, no message timeout); "
                   "expected bolts that ack or fail their input")
            raise ComponentError(msg)
        time.sleep(max(0.0, when - self.clock()))
        self.fire(self.clock())

    def close(self) -> None:
        for one in self.tasks.values():
            one.stop_component()


def sink_counts(topo: InMemoryTopology) -> dict[str, int]:
    """Input tuples executed per component."""
    out: dict[str, int] = {}
    for task, step in topo.steps.items():
        component = topo.tasks[task].component
        out[component] = out.get(component, 0) + step.counts["execute-count"]
    return out
