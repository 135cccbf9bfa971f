"""A bolt's step (step.py): each data frame decoded and executed as one batch, its output
flushed after it, tick tuples on time, the component's wake() when it asked for it, and
(effectively-once) markers aligned.

Each turn reads what the stream manager sent, runs the component on it, then flushes
everything the component emitted as one batch per destination: batches grow with load
and shrink to single tuples when the topology is idle, so throughput and latency both
stay good without tuning.

A component that owns its loop (pull.py) takes its input tuples itself: they wait in the
step's inbox until `take` hands them out, and input is not read while it is full.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

from ..api.component import Bolt
from ..api.tuple import Tuple, tick_tuple
from ..config import TopologyConfig
from ..telemetry import EXECUTE_COUNT, EXECUTE_TIME_NS
from ..wire import frames
from .step import MAX_WAIT, Checkpoints, Clock, TaskStep
from .task import Task

EXECUTE_CHECK = 16  # a long batch looks at the clock after this many tuples
MAX_BUFFERED = 10_000  # input tuples read but not yet taken by a component that pulls them


class BoltStep(TaskStep):
    """The bolt's policy: batches executed as they come (or handed out one at a time),
    output flushed per input batch and every execute.batch.time within a long one, ticks,
    wake-ups, backpressure, markers, counters and the metrics cadence."""

    def __init__(self, task: Task, clock: Clock = time.monotonic,
                 checkpoints: Checkpoints | None = None,
                 flush: Callable[[], None] | None = None, pulled: bool = False) -> None:
        super().__init__(task, clock, checkpoints, flush)
        self.inbox: deque[Tuple] | None = deque() if pulled else None
        self.reading = True  # whether the host may read input this turn
        self.freq = 0.0  # the tick period (0: none)
        self.next_tick = float("inf")
        self.ticks = 0  # tick tuples run or handed out
        self.wake: Callable[[], float | None] | None = None  # Bolt.wake, where it has it
        self.next_wake = float("inf")
        self.executed = False  # input ran since the last wake()
        self._handed_since = 0.0  # when the first tuple handed out unflushed went

    def resume(self) -> None:
        # Read after prepare, as Heron's instance reads it after initialize: a component
        # may set its tick period there (heronpy's window bolts do).
        task, now = self.task, self.clock()
        self.freq = TopologyConfig.read(task.user.config, task.topology,
                                        task.component).tick_freq_secs or 0.0
        self.next_tick = now + self.freq if self.freq else float("inf")
        wake = getattr(task.user, "wake", None) if self.inbox is None else None
        self.wake = None if getattr(wake, "__func__", None) is Bolt.wake else wake
        self.next_wake = float("inf")
        super().resume()

    # -- frames in --------------------------------------------------------------------

    def received(self, data: bytes, found: list) -> None:
        checkpoints = self.checkpoints
        for i, (kind, _dest, start, end) in enumerate(found):
            if kind == frames.DATA:
                if checkpoints is not None and checkpoints.holding \
                        and checkpoints.hold(data, start, end, self.execute_frame):
                    continue
                self.execute_frame(data, start, end)
                self.executed = True
                if self.inbox is None:
                    # Flush per input batch, not per read: a read can hold many batches,
                    # and holding their output back would leave the next stage idle.
                    self.flush()
            elif kind == frames.MARKER and checkpoints is not None:
                checkpoints.marker(data, start, end, self.execute_frame)
            elif kind == frames.CONTROL:
                self.take_control(data, found, i)

    def execute_frame(self, data: bytes, start: int, end: int) -> None:
        batch = self.task.decode(data, start, end)
        if self.inbox is not None:
            self.inbox.extend(batch)
            return
        execute = self.task.user.execute
        t0 = time.perf_counter_ns()
        tup = None
        try:
            if len(batch) <= EXECUTE_CHECK:
                for tup in batch:
                    execute(tup)
            else:
                self._execute_long(batch, execute)
        except BaseException as exc:
            # The component died on a tuple: those before it and that one (pystorm
            # failed it) were executed, as a multilang child's answered ones are.
            self.counts[EXECUTE_COUNT] += _executed_through(batch, getattr(exc, "tup", tup))
            raise
        self.counts[EXECUTE_TIME_NS] += time.perf_counter_ns() - t0
        self.counts[EXECUTE_COUNT] += len(batch)

    def _execute_long(self, batch: list[Tuple], execute: Callable) -> None:
        """A long batch sends what it produced (acks, emits) every execute.batch.time, so
        the tuples at its head are not held back until its tail is done."""
        clock = self.clock
        limit = self.task.conf.execute_batch_secs
        mark = clock()
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
                self.flush()
                mark = now

    def run_tuples(self, tuples: list[Tuple]) -> None:
        """Execute `tuples` now (a tick, or a harness's input)."""
        t0 = time.perf_counter_ns()
        execute = self.task.user.execute
        for t in tuples:
            execute(t)
        self.counts[EXECUTE_TIME_NS] += time.perf_counter_ns() - t0
        self.counts[EXECUTE_COUNT] += len(tuples)

    # -- a turn -----------------------------------------------------------------------

    def wait(self, now: float) -> float:
        """How long the host may wait for input; `reading` says whether it may read it
        (not while its output is over the watermark, or its inbox full)."""
        inbox = self.inbox
        self.reading = not (self.backpressured(now)
                            or (inbox is not None and len(inbox) >= MAX_BUFFERED))
        return max(0.0, min(MAX_WAIT, self.due(now) - now))

    def tick_due(self, now: float) -> Tuple | None:
        """The tick tuple due at `now`, if one is."""
        if now < self.next_tick:
            return None
        self.next_tick += self.freq
        if self.next_tick < now:
            self.next_tick = now + self.freq
        self.ticks += 1
        return tick_tuple(self.freq)

    def done(self, now: float) -> None:
        """The turn's end: a tick when due, the component's wake() after input or when it
        asked, its output out, and metrics when due."""
        if self.inbox is None:
            tick = self.tick_due(now)
            if tick is not None:
                self.run_tuples([tick])
            wake = self.wake
            if wake is not None and (self.executed or now >= self.next_wake):
                self.executed = False
                after = wake()
                self.next_wake = float("inf") if after is None else now + after
            self.flush()
        self.publish_due(now)

    def take(self) -> Tuple | None:
        """For a component that pulls its input: the next tuple read (one counts as
        executed when it is handed out), or once they are all out (and their output
        flushed), the tick tuple if one is due; else None."""
        inbox = self.inbox
        if inbox:
            # A long batch sends its output every execute.batch.time, not at its end.
            now = self.clock()
            if not self._handed_since:
                self._handed_since = now
            elif now - self._handed_since > self.task.conf.execute_batch_secs:
                self.flush()
                self._handed_since = now
            self.counts[EXECUTE_COUNT] += 1
            return inbox.popleft()
        self.flush()  # a whole input batch is done: its output goes on
        self._handed_since = 0.0
        tick = self.tick_due(self.clock())
        if tick is not None:
            self.counts[EXECUTE_COUNT] += 1
        return tick

    def take_buffered(self, limit: int) -> list[Tuple]:
        """Up to `limit` more input tuples already read, without waiting."""
        inbox = self.inbox
        if inbox is None:
            return []
        n = min(limit, len(inbox))
        self.counts[EXECUTE_COUNT] += n
        return [inbox.popleft() for _ in range(n)]

    def not_executed(self, n: int) -> None:
        """`n` tuples handed out never finished (the subprocess they went to died)."""
        self.counts[EXECUTE_COUNT] -= n

    def due(self, now: float) -> float:
        return min(super().due(now), self.next_tick, self.next_wake)


def _executed_through(batch: list[Tuple], last: Tuple | None) -> int:
    """How many tuples of `batch` were handed to the component, up to `last`."""
    for i, tup in enumerate(batch):
        if tup is last:
            return i + 1
    return 0
