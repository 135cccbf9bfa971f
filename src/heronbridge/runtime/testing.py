"""Every task of a topology in this process, without sockets or stream managers.

Each task is an InstanceRunner attached to the plan, with its real collector, decoders
and spout bookkeeping; frames go straight from the task that flushed them to the task
they name, and acks through the stream manager's own XOR tracker. Tests use it to check
components without starting processes, and benchmarks to measure the per-tuple path
with nothing else on it:

    topo = InMemoryTopology(plan)
    topo.run(spout_calls=1000)          # each spout task: up to 1000 next_tuple calls
    topo.runners[task].counts           # what each task did
"""

from __future__ import annotations

import time

from .errors import ComponentError
from .instance.runner import InstanceRunner
from .plan.logical import LogicalPlan
from .plan.tasks import TaskLayout
from .stream_manager.acking import XorTracker
from .wire import frames


class InMemoryTopology:
    def __init__(self, plan: LogicalPlan, seed: int = 0) -> None:
        layout = TaskLayout.of(plan)
        local = frozenset(layout.task_component)
        self.plan = plan
        self.tracker = XorTracker()
        self.in_flight: list[bytes] = []  # frames sent and not yet delivered
        self.runners: dict[int, InstanceRunner] = {}
        self.spouts: list[InstanceRunner] = []
        for task, component in sorted(layout.task_component.items()):
            if component not in plan.components:  # Storm's reserved tasks (__acker)
                continue
            runner = InstanceRunner(f"{plan.name}-in-memory", task, 0, "", "", secret=b"")
            runner.attach(plan, local, seed=seed + task)
            runner.send = self._sent
            if getattr(runner.user, "owns_loop", False):
                msg = (f"{runner.loc()}: the in-memory topology calls components; this one "
                       "owns its loop (pull.py), expected one the runtime's loops call")
                raise ComponentError(msg)
            runner.start_component()
            self.runners[task] = runner
            if runner.is_spout:
                self.spouts.append(runner)
                runner.active = True
                runner.user.activate()

    def _sent(self, out: list[bytes]) -> None:
        self.in_flight += out

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
        """Deliver frames until no task has anything more to send."""
        while self.in_flight:
            batch, self.in_flight = self.in_flight, []
            completed: list[int] = []
            failed: list[int] = []
            for frame in batch:
                self._deliver(frame, completed, failed)
            self._settle(frames.ACKED, completed)
            self._settle(frames.FAILED, failed)

    def _deliver(self, frame: bytes, completed: list[int], failed: list[int]) -> None:
        (_, kind, dest) = frames.HEADER.unpack_from(frame)
        if kind == frames.DATA:
            runner = self.runners[dest]
            runner.execute_frame(frame, 0, len(frame))
            runner.flush()
            return
        body = frames.ints_from(memoryview(frame)[frames.HEADER_SIZE:]).tolist()
        if kind == frames.INIT:
            self.tracker.init(body, completed)
        elif kind == frames.ACK:
            self.tracker.ack(body, completed)
        elif kind == frames.FAIL:
            self.tracker.fail(body, failed)

    def _settle(self, kind: int, roots: list[int]) -> None:
        by_task: dict[int, list[int]] = {}
        for root in roots:
            by_task.setdefault(root >> frames.ROOT_TASK_SHIFT, []).append(root)
        for task, mine in by_task.items():
            frame = frames.int_frame(kind, task, mine)
            self.runners[task].spout_frames(frame, [(kind, task, 0, len(frame))])
            self.runners[task].flush()

    def close(self) -> None:
        for runner in self.runners.values():
            runner.stop_component()


def sink_counts(topo: InMemoryTopology) -> dict[str, int]:
    """Input tuples executed per component."""
    out: dict[str, int] = {}
    for runner in topo.runners.values():
        out[runner.component] = out.get(runner.component, 0) + runner.counts["execute-count"]
    return out

