"""A task's policy without sockets or a clock of its own: the task step.

As the stream manager's router maps frames in to frames out, a step maps *(now, frames
in)* to *(calls on the component, frames out, the next wake-up)*: `received` takes what
the stream manager sent, `wait` says how long its host may wait for more before the next
turn (and whether it may read), and each turn's calls on the component go through the
step (spout_step.py: bursts of next_tuple; bolt_step.py: execute, ticks, wake). Frames
out leave through `flush`, the task's collector flushed to its link.

Its hosts only move bytes and time: the socket drivers (spout_driver.py, bolt_driver.py),
the host of a component that owns its loop (pull.py), the in-memory topology and the
test harnesses (runtime/testing.py, heronbridge.testing), each with its own clock. The
JVM task host's loop passes vectors generated from it (scripts/step_vectors.py).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Protocol

from google.protobuf.message import Message

from ..proto import control_pb2, topology_pb2
from ..telemetry import (
    ACK_COUNT,
    BACKPRESSURE_MS,
    EXECUTE_COUNT,
    EXECUTE_TIME_NS,
    FAIL_COUNT,
    NEXT_TUPLE_COUNT,
    TIMEOUT_COUNT,
)
from .task import RolledBack, Task

MAX_WAIT = 0.1  # a host wakes at least this often, to flush and publish metrics

Clock = Callable[[], float]


class Checkpoints(Protocol):
    """What a step asks of its task's checkpointer (checkpointer.py) under effectively-once."""

    @property
    def holding(self) -> bool: ...  # markers are aligning: inputs whose marker came wait

    def checkpoint(self, checkpoint_id: str) -> None: ...

    def checkpoint_consistent(self, checkpoint_id: str) -> None: ...

    def hold(self, data: bytes, start: int, end: int,
             execute: Callable[[bytes, int, int], None]) -> bool: ...

    def marker(self, data: bytes, start: int, end: int,
               execute: Callable[[bytes, int, int], None]) -> None: ...


class Backpressure:
    """Hysteresis on the task's unsent output: producing stops above the high watermark
    and resumes below the low one; the time stopped is counted."""

    __slots__ = ("blocked_ms", "high", "low", "since")

    def __init__(self, high: int, low: int) -> None:
        self.high, self.low = high, low
        self.since: float | None = None
        self.blocked_ms = 0.0

    def check(self, unsent: int, now: float) -> bool:
        if self.since is None:
            if unsent > self.high:
                self.since = now
        elif unsent <= self.low:
            self.blocked_ms += (now - self.since) * 1000
            self.since = None
        return self.since is not None


class TaskStep:
    """What a spout's and a bolt's step share: counters, backpressure, the metrics
    cadence, frames kept for the next turn, and the control frames a task acts on."""

    def __init__(self, task: Task, clock: Clock = time.monotonic,
                 checkpoints: Checkpoints | None = None,
                 flush: Callable[[], None] | None = None) -> None:
        self.task = task
        self.clock = clock
        self.checkpoints = checkpoints
        self.flush = flush or task.flush  # frames out: the collector's, to the task's link
        conf = task.conf
        self.counts = {NEXT_TUPLE_COUNT: 0, EXECUTE_COUNT: 0, EXECUTE_TIME_NS: 0,
                       ACK_COUNT: 0, FAIL_COUNT: 0, TIMEOUT_COUNT: 0}
        self.backpressure = Backpressure(conf.bp_high_bytes, conf.bp_low_bytes)
        self.next_metrics = clock() + conf.metrics_interval_secs
        self.running = False  # the topology's state is RUNNING
        # Effectively-once: not between a rollback and its end (nor before the first).
        self.processing = not conf.stateful
        self.txid = 0
        self._backlog: tuple[bytes, list] = (b"", [])

    # -- frames in --------------------------------------------------------------------

    def keep(self, data: bytes, found: list) -> None:
        """Frames to take at the next turn (what came with the registration's reply)."""
        self._backlog = (data, found)

    def backlog(self) -> tuple[bytes, list]:
        """The frames kept for this turn, handed over once."""
        kept, self._backlog = self._backlog, (b"", [])
        return kept

    def resume(self) -> None:
        """A host's loop begins (again, after a rollback): take the frames kept."""
        self.backpressure.since = None
        data, found = self.backlog()
        if found:
            self.received(data, found)

    def received(self, data: bytes, found: list) -> None:
        """What the stream manager sent (a read's bytes and the frames found in them)."""
        raise NotImplementedError

    def wait(self, now: float) -> float:
        """How long the host may wait for input before the turn goes on."""
        raise NotImplementedError

    def done(self, now: float) -> None:
        """The end of the host's turn begun at `now`."""
        raise NotImplementedError

    def take_control(self, data: bytes, found: list, i: int) -> None:
        """Control frame `found[i]`: a rollback unwinds the host (the frames after it are
        kept for the restored component), anything else is `control`."""
        _, _, start, end = found[i]
        msg = self.task.parse_control(data, start, end)
        if isinstance(msg, control_pb2.RestoreState):
            self.keep(data, found[i + 1:])
            raise RolledBack(msg)
        self.control(msg)

    def control(self, msg: Message | None) -> None:
        checkpoints = self.checkpoints if self.processing else None
        if isinstance(msg, control_pb2.TopologyStateChange):
            self.running = msg.state == topology_pb2.RUNNING
            self.activation()
        elif isinstance(msg, control_pb2.StartProcessing):
            if msg.txid == self.txid:
                self.processing = True
                self.activation()
        elif isinstance(msg, control_pb2.StartCheckpoint):
            if checkpoints is not None:
                self.start_checkpoint(checkpoints, msg.checkpoint_id)
        elif isinstance(msg, control_pb2.ConsistentCheckpoints):
            if checkpoints is not None and msg.checkpoint_ids:
                checkpoints.checkpoint_consistent(msg.checkpoint_ids[0])
        else:
            self.task.control(msg)  # log levels, sampling: the task's own

    def start_checkpoint(self, checkpoints: Checkpoints, checkpoint_id: str) -> None:
        """Spouts start checkpoints; a bolt's come with the markers of its inputs."""

    def activation(self) -> None:
        """The topology's state or the rollback's changed (a spout acts on it)."""

    def rolling_back(self, txid: int) -> None:
        """A rollback began: nothing is processed until its StartProcessing."""
        self.txid = txid
        self.processing = False

    # -- time -------------------------------------------------------------------------

    def backpressured(self, now: float) -> bool:
        link = self.task.link
        return self.backpressure.check(link.out_bytes if link is not None else 0, now)

    def publish_due(self, now: float) -> None:
        """The metrics cadence: publish once an interval has passed."""
        if now >= self.next_metrics:
            self.publish()
            self.next_metrics = now + self.task.conf.metrics_interval_secs

    def publish(self) -> None:
        self.task.publish(self)

    def report(self, counters: dict[str, float], gauges: dict[str, float],
               histograms: dict[str, list[int]]) -> None:
        """The step's part of the task's metrics."""
        counters.update(self.counts)
        counters[BACKPRESSURE_MS] = self.backpressure.blocked_ms

    def due(self, now: float) -> float:
        """When this step next has something to do with no input (its timers), from a
        turn at `now`. Metrics are due only where they go somewhere."""
        return self.next_metrics if self.task.telemetry.publisher is not None else math.inf

