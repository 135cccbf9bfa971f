"""A task's step, without sockets and on a fake clock: frames in, calls on the component
and frames out, and when the host may wait."""

from __future__ import annotations

import pytest

from heronbridge.runtime import Bolt, Grouping, Spout, TopologyBuilder
from heronbridge.runtime.instance.bolt_step import BoltStep
from heronbridge.runtime.instance.pacing import EAGER_SECS, IDLE_WAIT, MAX_ACK_WAIT
from heronbridge.runtime.instance.spout_step import SpoutStep
from heronbridge.runtime.instance.step import MAX_WAIT
from heronbridge.runtime.instance.task import RolledBack, Task
from heronbridge.runtime.instance.window import STALL_SECS
from heronbridge.runtime.plan import TaskLayout
from heronbridge.runtime.proto import control_pb2, topology_pb2
from heronbridge.runtime.telemetry import (
    ACK_COUNT,
    BACKPRESSURE_MS,
    EXECUTE_COUNT,
    FAIL_COUNT,
    NEXT_TUPLE_COUNT,
    TIMEOUT_COUNT,
    WINDOW_HELD_MS,
)
from heronbridge.runtime.wire import frames
from heronbridge.runtime.wire.serde import make_serializer

HIGH, LOW = 4096, 1024  # the backpressure watermarks, bytes


class Clock:
    """The step's time: moves only when the test says, or by `per_call` at each call of
    the component (a spout whose next_tuple takes that long)."""

    def __init__(self) -> None:
        self.now = 100.0
        self.per_call = 0.0

    def __call__(self) -> float:
        return self.now


class Link:
    def __init__(self) -> None:
        self.out_bytes = 0
        self.sent: list[list[bytes]] = []

    def send(self, out: list[bytes]) -> None:
        self.sent.append(out)


class Numbers(Spout):
    """Emits the next number, up to `left` of them, each call taking the clock's
    `per_call`."""

    outputs = ["n"]
    clock: Clock

    def open(self, config, context, collector):
        self.n, self.left, self.calls = 0, 10**6, 0
        self.acked, self.failed, self.active = [], [], None

    def next_tuple(self):
        self.calls += 1
        self.clock.now += self.clock.per_call
        if self.left > 0:
            self.left -= 1
            self.collector.emit([self.n], msg_id=self.n)
            self.n += 1

    def ack(self, msg_id):
        self.acked.append(msg_id)

    def fail(self, msg_id):
        self.failed.append(msg_id)
        self.collector.emit([msg_id], msg_id=msg_id)  # a replay

    def activate(self):
        self.active = True

    def deactivate(self):
        self.active = False


class Doubler(Bolt):
    outputs = ["n"]

    def prepare(self, config, context, collector):
        self.seen, self.wakes, self.wake_after = [], 0, None

    def execute(self, tup):
        self.seen.append("tick" if tup.is_tick else tup.values[0])
        if not tup.is_tick:
            self.collector.emit([tup.values[0] * 2], anchors=tup)
            self.collector.ack(tup)

    def wake(self):
        self.wakes += 1
        return self.wake_after


def task_of(component: str, **config: object) -> tuple[Task, Link, Clock]:
    b = TopologyBuilder("steps", {"topology.reliability.mode": "ATLEAST_ONCE",
                                  "topology.max.spout.pending": 8,
                                  "heronbridge.backpressure.high.watermark.bytes": HIGH,
                                  "heronbridge.backpressure.low.watermark.bytes": LOW,
                                  **config})
    b.spout("numbers", Numbers)
    b.bolt("doubler", Doubler, inputs={"numbers": Grouping.SHUFFLE})
    plan = b.build()
    layout = TaskLayout.of(plan)
    task = Task("steps-1", layout.component_tasks[component][0], 0, "", "", secret=b"")
    task.attach(plan, frozenset(layout.task_component), seed=1)
    clock = Clock()
    task.user.clock = clock
    link = task.link = Link()
    task.start_component()
    return task, link, clock


def spout_step(**config: object) -> tuple[SpoutStep, Link, Clock]:
    task, link, clock = task_of("numbers", **config)
    step = SpoutStep(task, clock)
    step.resume()
    step.control(control_pb2.TopologyStateChange(state=topology_pb2.RUNNING))
    clock.now += EAGER_SECS  # past the bursts of one emit just after activation
    return step, link, clock


def turn(step: SpoutStep, data: bytes = b"") -> tuple[float, int]:
    """One host turn: the wait, what was read, a burst; returns (the wait, calls made)."""
    wait = step.wait(step.clock())
    if data:
        step.received(data, frames.split_frames(data)[0])
    calls = step.run_burst()
    step.done(step.clock())
    return wait, calls


def settled(step: SpoutStep, kind: int, roots: list[int]) -> bytes:
    return frames.int_frame(kind, step.task.task, roots)


def roots(step: SpoutStep) -> list[int]:
    return list(step.task.emitter.pending)


# -- a spout's bursts ----------------------------------------------------------------------


def test_a_burst_fills_the_window_then_the_step_waits_for_acks_that_free_a_burst_of_it():
    step, link, clock = spout_step()
    assert turn(step) == (0.0, 8)  # the window: topology.max.spout.pending
    assert [f[4] for f in link.sent[-1]] == [frames.INIT, frames.DATA]
    wait, calls = turn(step)
    assert (wait, calls) == (MAX_WAIT, 0)  # full: nothing to do but read
    # It resumes once a burst's worth is free (below 8 - min(burst, 8 // 4) = 6 in
    # flight), not at each ack: one flush and one wake-up per returning tree would cost
    # more.
    for n in (8, 8):
        turn(step, settled(step, frames.ACKED, roots(step)[:1]))
        assert step.task.user.n == n
    turn(step, settled(step, frames.ACKED, roots(step)[:1]))  # 5 in flight
    turn(step)
    assert step.task.user.n == 11 and step.counts[ACK_COUNT] == 3


def test_a_burst_ends_after_its_calls_its_time_and_its_bytes():
    step, _, clock = spout_step(**{"topology.max.spout.pending": 1000,
                                   "heronbridge.spout.burst": 5})
    assert turn(step)[1] == 5
    step, _, clock = spout_step(**{"topology.max.spout.pending": 1000,
                                   "heronbridge.emit.batch.time.ms": 1})
    clock.per_call = 0.0003
    assert turn(step)[1] == 4  # the fourth call ends past 1 ms
    step, _, _ = spout_step(**{"topology.max.spout.pending": 1000,
                               "heronbridge.emit.batch.size.bytes": 3 * 64})
    assert turn(step)[1] == 3  # 64 bytes an emit until a flush measures them


def test_after_activation_each_burst_is_one_emit_until_the_pacer_calms():
    task, _, clock = task_of("numbers")
    step = SpoutStep(task, clock)
    assert turn(step) == (MAX_WAIT, 0)  # not active before its topology runs
    step.control(control_pb2.TopologyStateChange(state=topology_pb2.RUNNING))
    assert task.user.active
    assert [turn(step)[1] for _ in range(3)] == [1, 1, 1]
    clock.now += EAGER_SECS
    assert turn(step)[1] == 5  # the rest of the window
    step.control(control_pb2.TopologyStateChange(state=topology_pb2.PAUSED))
    assert task.user.active is False and turn(step)[1] == 0


def test_an_idle_spout_is_called_again_after_a_short_wait_or_after_its_acks_if_it_slept():
    step, _, clock = spout_step()
    step.task.user.left = 2
    assert turn(step) == (0.0, 3)  # the third call emitted nothing
    assert step.wait(clock()) == IDLE_WAIT
    assert step.run_burst() == 1 and step.counts[NEXT_TUPLE_COUNT] == 4
    clock.per_call = 0.5  # it sleeps when idle: its trees' acks are waited for first
    assert step.run_burst() == 0  # the turn's wait was not taken yet
    step.wait(clock())
    assert step.run_burst() == 1
    assert step.wait(clock()) == pytest.approx(MAX_ACK_WAIT)
    assert step.due(clock()) == pytest.approx(clock() + MAX_ACK_WAIT)
    assert step.run_burst() == 0
    clock.now += MAX_ACK_WAIT
    assert step.wait(clock()) == IDLE_WAIT


def test_at_most_once_a_message_id_is_acked_as_soon_as_it_is_emitted():
    step, _, _ = spout_step(**{"topology.reliability.mode": "ATMOST_ONCE"})
    step.task.user.left = 3
    turn(step)
    assert step.task.user.acked == [0, 1, 2] and step.counts[ACK_COUNT] == 3
    assert step.task.emitter.pending == {} and step.window.limit == float("inf")


def test_the_time_a_full_window_held_the_spout_is_counted():
    step, _, clock = spout_step()
    turn(step)
    turn(step)  # its wait finds the window full
    for _ in range(3):
        clock.now += 0.25
        turn(step)
    assert step.held_ms == pytest.approx(750)
    turn(step, settled(step, frames.ACKED, roots(step)[:4]))
    turn(step)  # its wait finds the window open again: the count stops
    clock.now += 1
    turn(step)
    assert step.held_ms == pytest.approx(750)
    counters, gauges, histograms = {}, {}, {}
    step.report(counters, gauges, histograms)
    assert counters[WINDOW_HELD_MS] == pytest.approx(750)


def test_a_latency_led_window_doubles_each_second_it_hears_nothing_and_says_when():
    step, _, clock = spout_step(**{"topology.max.spout.pending": None})
    assert turn(step)[1] == 1  # it starts at one tree
    full_at = clock()
    turn(step)  # its wait finds the window full: when it stalls is its next timer
    assert step.due(clock()) == full_at + STALL_SECS
    clock.now = full_at + STALL_SECS
    assert turn(step)[1] == 0 and step.window.limit == 2  # 1 in flight: not below 2 - 1
    assert step.due(clock()) == full_at + 2 * STALL_SECS
    clock.now = full_at + 2 * STALL_SECS
    assert turn(step)[1] == 3 and step.window.limit == 4


def test_acks_and_fails_go_to_the_spout_and_teach_the_window_and_replays_go_out_first():
    step, link, clock = spout_step(**{"topology.max.spout.pending": None})
    turn(step)
    clock.now += 0.002
    turn(step, settled(step, frames.ACKED, roots(step)))  # its wait found the window full
    assert step.task.user.acked == [0] and step.window.limit == 2
    assert sum(step.latency.counts) == 1
    assert turn(step)[1] == 2
    first, _ = roots(step)
    clock.now += 0.003
    sent = len(link.sent)
    failed = settled(step, frames.FAILED, [first])
    step.received(failed, frames.split_frames(failed)[0])
    assert step.task.user.failed == [1] and step.counts[FAIL_COUNT] == 1
    assert len(link.sent) == sent + 1  # the replay, flushed before next_tuple runs
    replay = max(step.task.emitter.pending.values(), key=lambda entry: entry[1])
    assert replay == (1, clock())  # stamped when it was emitted again
    expired = settled(step, frames.EXPIRED, roots(step))
    step.received(expired, frames.split_frames(expired)[0])
    assert step.counts[TIMEOUT_COUNT] == 2 and step.task.user.failed == [1, 2, 1]


def test_backpressure_holds_the_spout_between_its_watermarks_and_is_counted():
    step, link, clock = spout_step()
    link.out_bytes = HIGH + 1
    assert turn(step) == (MAX_WAIT, 0)
    clock.now += 0.5
    link.out_bytes = LOW + 1  # above the low watermark: still held
    assert turn(step)[1] == 0
    clock.now += 0.5
    link.out_bytes = LOW
    assert turn(step)[1] == 8
    counters: dict[str, float] = {}
    step.report(counters, {}, {})
    assert counters[BACKPRESSURE_MS] == pytest.approx(1000)


def test_a_rollback_deactivates_the_spout_until_its_processing_starts():
    step, _, _ = spout_step()
    restore = frames.control_frame(control_pb2.RestoreState(checkpoint_id="c1", txid=3))
    later = frames.control_frame(control_pb2.StartProcessing(txid=3))
    with pytest.raises(RolledBack):
        step.received(restore + later, frames.split_frames(restore + later)[0])
    step.rolling_back(3)
    assert not step.active
    assert turn(step)[1] == 0
    step.resume()  # the frame kept: StartProcessing of the rollback
    assert step.active and step.task.user.active


def test_metrics_are_published_once_an_interval_where_they_go_somewhere():
    step, _, clock = spout_step(**{"heronbridge.metrics.interval.secs": 10})
    published: list = []
    step.task.telemetry.publisher = type("P", (), {"publish": lambda s, m: published.append(m)})()
    turn(step)
    assert published == []
    clock.now += 10
    turn(step)
    assert len(published) == 1 and published[0].counters[NEXT_TUPLE_COUNT] == 8


# -- a bolt ---------------------------------------------------------------------------------


def bolt_step(pulled: bool = False, **config: object) -> tuple[BoltStep, Link, Clock]:
    task, link, clock = task_of("doubler", **config)
    step = BoltStep(task, clock, pulled=pulled)
    step.resume()
    return step, link, clock


def data(step: BoltStep, values: list[int]) -> bytes:
    src = TaskLayout.of(step.task.attachment.plan).component_tasks["numbers"][0]
    records = [[[v], (src << frames.ROOT_TASK_SHIFT) | (v + 1), v + 1] for v in values]
    return frames.data_frame(step.task.task, src, 0, make_serializer("msgpack").encode(records))


def bolt_turn(step: BoltStep, frame: bytes = b"") -> float:
    wait = step.wait(step.clock())
    if frame:
        step.received(frame, frames.split_frames(frame)[0])
    step.done(step.clock())
    return wait


def test_a_bolt_runs_each_frame_as_a_batch_and_flushes_its_output_after_each():
    step, link, _ = bolt_step()
    bolt_turn(step, data(step, [1, 2]) + data(step, [3]))
    assert step.task.user.seen == [1, 2, 3] and step.counts[EXECUTE_COUNT] == 3
    assert [[f[4] for f in flush] for flush in link.sent] == [[frames.ACK], [frames.ACK]]


def test_a_bolts_ticks_come_on_time_and_its_wait_ends_at_the_next():
    step, _, clock = bolt_step(**{"topology.tick.tuple.freq.secs": 2})
    assert bolt_turn(step) == MAX_WAIT
    clock.now += 1.95
    assert bolt_turn(step) == pytest.approx(0.05)
    clock.now += 0.05
    bolt_turn(step)
    assert step.task.user.seen == ["tick"] and step.ticks == 1
    clock.now += 7  # late: the next comes a period after this one, not four at once
    bolt_turn(step)
    assert step.task.user.seen == ["tick", "tick"] and step.next_tick == clock() + 2


def test_a_bolt_is_woken_after_its_input_and_when_it_asked():
    step, _, clock = bolt_step()
    bolt = step.task.user
    bolt.wake_after = 0.5
    bolt_turn(step, data(step, [1]))
    assert bolt.wakes == 1 and step.due(clock()) == clock() + 0.5
    clock.now += 0.5
    bolt.wake_after = None
    bolt_turn(step)
    bolt_turn(step)
    assert bolt.wakes == 2


def test_a_bolt_over_its_watermark_reads_nothing_until_below_the_low_one():
    step, link, _ = bolt_step()
    link.out_bytes = HIGH + 1
    step.wait(step.clock())
    assert not step.reading
    link.out_bytes = LOW
    step.wait(step.clock())
    assert step.reading


def test_a_long_batch_sends_its_output_every_execute_batch_time():
    step, link, clock = bolt_step(**{"heronbridge.execute.batch.time.ms": 1})
    step.task.user.execute = lambda tup, run=step.task.user.execute: (
        run(tup), setattr(clock, "now", clock.now + 0.0001))
    bolt_turn(step, data(step, list(range(64))))
    # Checked every 16 tuples (1.6 ms a check): three flushes within, one after.
    assert len(link.sent) == 4 and step.counts[EXECUTE_COUNT] == 64


def test_a_pulling_component_takes_tuples_one_at_a_time_and_its_output_goes_per_batch():
    step, link, clock = bolt_step(pulled=True, **{"topology.tick.tuple.freq.secs": 1})
    bolt_turn(step, data(step, [1, 2]))
    assert step.counts[EXECUTE_COUNT] == 0 and not link.sent  # none handed out yet
    first = step.take()
    assert first is not None and first.values[0] == 1 and step.counts[EXECUTE_COUNT] == 1
    step.task.emitter.ack(first)
    assert [t.values[0] for t in step.take_buffered(5)] == [2]
    assert not link.sent
    clock.now += 1
    tick = step.take()  # the batch is out: its output goes, then the tick due
    assert [[f[4] for f in flush] for flush in link.sent] == [[frames.ACK]]
    assert tick is not None and tick.is_tick and step.counts[EXECUTE_COUNT] == 3
    assert step.take() is None
    step.not_executed(1)
    assert step.counts[EXECUTE_COUNT] == 2
