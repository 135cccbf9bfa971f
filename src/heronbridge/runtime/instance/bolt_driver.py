"""The bolt driver: each data frame decoded and executed as one batch, its output flushed
after it, tick tuples on time, the component's wake() when it asked for it, and
(effectively-once) markers aligned.

Each turn reads what the stream manager sent, runs the component on it, then flushes
everything the component emitted as one batch per destination: batches grow with load
and shrink to single tuples when the topology is idle, so throughput and latency both
stay good without tuning.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from ..api.component import Bolt
from ..api.tuple import Tuple, tick_tuple
from ..config import TopologyConfig
from ..errors import ProtocolError
from ..telemetry import EXECUTE_COUNT, EXECUTE_TIME_NS
from ..wire import frames
from .checkpointer import Checkpointer
from .task import Task

EXECUTE_CHECK = 16  # a long batch looks at the clock after this many tuples


class BoltDriver:
    def __init__(self, task: Task, checkpointer: Checkpointer | None = None) -> None:
        self.task = task
        self.checkpointer = checkpointer  # effectively-once: aligns markers

    def run(self) -> None:
        """Until the task stops (a rollback unwinds it: see RolledBack)."""
        task = self.task
        conn = task.conn
        if conn is None:
            msg = f"{task.loc()}: the bolt driver runs a registered task"
            raise ProtocolError(msg)
        task.reset_backpressure()
        # Read after prepare, as Heron's instance reads it after initialize: a component
        # may set its tick period there (heronpy's window bolts do).
        freq = TopologyConfig.read(task.user.config, task.topology,
                                   task.component).tick_freq_secs or 0.0
        monotonic = time.monotonic
        next_tick = monotonic() + freq if freq else float("inf")
        wake = getattr(task.user, "wake", None)  # Bolt.wake, where the component has it
        if getattr(wake, "__func__", None) is Bolt.wake:
            wake = None  # Bolt's own: it never asks to be woken
        next_wake = float("inf")
        interval = task.conf.metrics_interval_secs
        next_metrics = monotonic() + interval
        data, found = task.backlog
        task.backlog = (b"", [])
        checkpointer = self.checkpointer
        aligner = checkpointer.aligner if checkpointer is not None else None
        while not task.stopping:
            now = monotonic()
            if not found:
                blocked = task.backpressured(now)
                wait = max(0.0, min(0.1, next_tick - now, next_metrics - now, next_wake - now))
                data, found = conn.poll(wait, read=not blocked)
            executed = False
            for i, (kind, _dest, start, end) in enumerate(found):
                if kind == frames.DATA:
                    if aligner is not None and aligner.holding and checkpointer is not None \
                            and checkpointer.hold(data, start, end, self.execute_frame):
                        continue
                    self.execute_frame(data, start, end)
                    executed = True
                    # Flush per input batch, not per read: a read can hold many batches,
                    # and holding their output back would leave the next stage idle.
                    task.flush()
                elif kind == frames.MARKER and checkpointer is not None:
                    checkpointer.marker(data, start, end, self.execute_frame)
                elif kind == frames.CONTROL:
                    task.take_control(data, found, i)
            found = []
            now = monotonic()
            if now >= next_tick:
                self.run_tuples([tick_tuple(freq)])
                next_tick += freq
                if next_tick < now:
                    next_tick = now + freq
            if wake is not None and (executed or now >= next_wake):
                after = wake()
                next_wake = float("inf") if after is None else now + after
            task.flush()
            if now >= next_metrics:
                task.publish()
                next_metrics = now + interval

    def run_tuples(self, tuples: list[Tuple]) -> None:
        task = self.task
        t0 = time.perf_counter_ns()
        execute = task.user.execute
        for t in tuples:
            execute(t)
        task.counts[EXECUTE_TIME_NS] += time.perf_counter_ns() - t0
        task.counts[EXECUTE_COUNT] += len(tuples)

    def execute_frame(self, data: bytes, start: int, end: int) -> None:
        task = self.task
        batch = task.decode(data, start, end)
        execute = task.user.execute
        t0 = time.perf_counter_ns()
        tup = None
        try:
            if len(batch) <= EXECUTE_CHECK:
                for tup in batch:
                    execute(tup)
            else:
                self._execute_long(batch, execute, t0)
        except BaseException as exc:
            # The component died on a tuple: those before it and that one (pystorm
            # failed it) were executed, as a multilang child's answered ones are.
            task.counts[EXECUTE_COUNT] += _executed_through(batch, getattr(exc, "tup", tup))
            raise
        task.counts[EXECUTE_TIME_NS] += time.perf_counter_ns() - t0
        task.counts[EXECUTE_COUNT] += len(batch)

    def _execute_long(self, batch: list[Tuple], execute: Callable, t0: int) -> None:
        """A long batch sends what it produced (acks, emits) every execute.batch.time, so
        the tuples at its head are not held back until its tail is done."""
        task = self.task
        clock = time.perf_counter_ns
        limit = int(task.conf.execute_batch_secs * 1e9)
        mark = t0
        for i in range(0, len(batch), EXECUTE_CHECK):
            tup = None
            try:
                for tup in batch[i:i + EXECUTE_CHECK]:
                    execute(tup)
            except BaseException as exc:
                exc.tup = tup  # type: ignore[attr-defined]  # which one, for execute_frame
                raise
            now = clock()
            if now - mark >= limit:
                task.flush()
                mark = now


def _executed_through(batch: list[Tuple], last: Tuple | None) -> int:
    """How many tuples of `batch` were handed to the component, up to `last`."""
    for i, tup in enumerate(batch):
        if tup is last:
            return i + 1
    return 0
