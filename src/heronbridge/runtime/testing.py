"""Every task of a topology in this process, without sockets or stream managers.

Each task is an InstanceRunner attached to the plan, with its real collector, decoders
and spout bookkeeping; what a task flushes goes through the stream manager's own router
(routes, XOR tracking, the drop policy) and what comes out goes straight to the tasks it
names. Tests use it to check components without starting processes, and benchmarks to
measure the per-tuple path with nothing else on it:

    topo = InMemoryTopology(plan)
    topo.run(spout_calls=1000)          # each spout task: up to 1000 next_tuple calls
    topo.runners[task].counts           # what each task did
"""

from __future__ import annotations

import time
from functools import partial

from .config import TopologyConfig
from .errors import ComponentError
from .instance.runner import InstanceRunner
from .plan.logical import LogicalPlan
from .plan.tasks import TaskLayout
from .stream_manager.router import Router
from .wire import frames
from .wire.serde import make_serializer


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
        self.router = Router(f"{plan.name}-in-memory", acking=conf.acking, gated=False,
                             xor_buckets=conf.xor_buckets,
                             decode=make_serializer(conf.serializer, plan.name).decode,
                             on_control=lambda source, message: None)
        self.in_flight: list[tuple[_TaskEnd, bytes]] = []  # sent and not yet routed
        self.runners: dict[int, InstanceRunner] = {}
        self.spouts: list[InstanceRunner] = []
        for task, component in sorted(layout.task_component.items()):
            if component not in plan.components:  # Storm's reserved tasks (__acker)
                continue
            runner = InstanceRunner(f"{plan.name}-in-memory", task, 0, "", "", secret=b"")
            runner.attach(plan, local, seed=seed + task)
            end = _TaskEnd(task)
            runner.send = partial(self._sent, end)
            if getattr(runner.user, "owns_loop", False):
                msg = (f"{runner.loc()}: the in-memory topology calls components; this one "
                       "owns its loop (pull.py), expected one the runtime's loops call")
                raise ComponentError(msg)
            runner.start_component()
            self.runners[task] = runner
            self.router.route[task] = end
            if runner.is_spout:
                self.spouts.append(runner)
                runner.active = True
                runner.user.activate()
        self.router.place([r.task for r in self.spouts], True)

    def _sent(self, source: _TaskEnd, out: list[bytes]) -> None:
        self.in_flight.append((source, b"".join(out)))

    def run(self, spout_calls: int, batch: int = 100) -> None:
        """Call each spout's next_tuple `spout_calls` times, `batch` calls per flush, and
        deliver everything that follows until the topology is quiet."""
        done = 0
        while done < spout_calls:
            n = min(batch, spout_calls - done)
            for runner in self.spouts:
                em = runner.emitter
                em.now = time.monotonic()
                next_tuple = runner.user.next_tuple
                for _ in range(n):
                    next_tuple()
                if em.ack_now:  # at-most-once: acked as soon as emitted
                    acked, em.ack_now = em.ack_now, []
                    for msg_id in acked:
                        runner.user.ack(msg_id)
                runner.flush()
            done += n
            self.drain()

    def drain(self) -> None:
        """Route frames until no task has anything more to send."""
        while self.in_flight:
            batch, self.in_flight = self.in_flight, []
            delivered: dict[_TaskEnd, list] = {}
            for source, data in batch:
                found, _ = frames.split_frames(data)
                for end, chunks in self.router.receive(source, data, found).items():
                    delivered.setdefault(end, []).extend(chunks)
            for end, chunks in delivered.items():
                self._deliver(self.runners[end.task], b"".join(chunks))

    @staticmethod
    def _deliver(runner: InstanceRunner, data: bytes) -> None:
        found, _ = frames.split_frames(data)
        if runner.is_spout:  # acked, failed and expired trees
            runner.spout_frames(data, found)
        else:
            for kind, _dest, start, end in found:
                if kind == frames.DATA:
                    runner.execute_frame(data, start, end)
                    runner.flush()
        runner.flush()

    def close(self) -> None:
        for runner in self.runners.values():
            runner.stop_component()


def sink_counts(topo: InMemoryTopology) -> dict[str, int]:
    """Input tuples executed per component."""
    out: dict[str, int] = {}
    for runner in topo.runners.values():
        out[runner.component] = out.get(runner.component, 0) + runner.counts["execute-count"]
    return out

