"""A task's drivers without sockets: the bolt driver and the spout driver around their
steps, and the spout's pacer. (The steps' own policy, on a fake clock: test_step.py.)"""

from __future__ import annotations

import logging
import time

import msgspec
import pytest

from heronbridge.runtime import Bolt, Grouping, Spout, TopologyBuilder
from heronbridge.runtime.config import TopologyConfig
from heronbridge.runtime.instance.bolt_driver import BoltDriver
from heronbridge.runtime.instance.bolt_step import BoltStep
from heronbridge.runtime.instance.pacing import EAGER_SECS, MAX_ACK_WAIT, SpoutPacer
from heronbridge.runtime.instance.spout_driver import SpoutDriver
from heronbridge.runtime.instance.spout_step import SpoutStep
from heronbridge.runtime.instance.task import RolledBack, Task
from heronbridge.runtime.plan import TaskLayout
from heronbridge.runtime.proto import control_pb2, topology_pb2
from heronbridge.runtime.telemetry import (
    ACK_COUNT,
    EXECUTE_COUNT,
    SOURCE_LAG,
    TIMEOUT_COUNT,
    WINDOW_HELD_MS,
    WINDOW_LIMIT,
)
from heronbridge.runtime.wire import frames
from heronbridge.runtime.wire.serde import KRYO_EXT, make_serializer


class Numbers(Spout):
    outputs = ["n"]

    def open(self, config, context, collector):
        self.n = 0
        self.acked, self.failed = [], []

    def next_tuple(self):
        self.collector.emit([self.n], msg_id=self.n)
        self.n += 1

    def ack(self, msg_id):
        self.acked.append(msg_id)

    def fail(self, msg_id):
        self.failed.append(msg_id)


class Doubler(Bolt):
    outputs = ["n"]

    def prepare(self, config, context, collector):
        self.seen = []

    def execute(self, tup):
        self.seen.append(tup.values[0])
        self.collector.emit([tup.values[0] * 2], anchors=tup)
        self.collector.ack(tup)


class Conn:
    """What the drivers read and write, without a socket: reads come from a script; after
    it, a few empty polls, then the task is told to stop. What is sent goes to `sent`,
    one list per flush."""

    def __init__(self, task: Task, reads: list[bytes], empty_polls: int = 20,
                 sent: list[list[bytes]] | None = None) -> None:
        self.task = task
        self.reads = [(data, frames.split_frames(data)[0]) for data in reads]
        self.empty_polls = empty_polls
        self.out_bytes = 0
        self.sent = sent if sent is not None else []

    def send(self, out: list[bytes]) -> None:
        self.sent.append(out)

    def poll(self, timeout, read=True):
        if self.reads:
            return self.reads.pop(0)
        self.empty_polls -= 1
        if self.empty_polls <= 0:
            self.task.stopping = True
        return b"", []


def connect(task: Task, reads: list[bytes], empty_polls: int = 20,
            cls: type[Conn] = Conn) -> Conn:
    """A new script of reads for the task, keeping what it sent so far."""
    old = task.link
    conn = task.link = cls(task, reads, empty_polls, old.sent if isinstance(old, Conn) else None)
    task.stopping = False
    return conn


class Metrics:
    def publish(self, metrics):
        pass


def task_of(component: str, max_pending: int | None = 100, bolt: type = Doubler,
            **config: object) -> tuple[Task, list[list[bytes]]]:
    """A task of the drivers' topology; `max_pending` None: the latency-led window."""
    pending = {} if max_pending is None else {"topology.max.spout.pending": max_pending}
    b = TopologyBuilder("drivers", {"topology.reliability.mode": "ATLEAST_ONCE", **pending,
                                    **config})
    b.spout("numbers", Numbers)
    b.bolt("doubler", bolt, inputs={"numbers": Grouping.SHUFFLE})
    plan = b.build()
    task = Task("drivers-1", TaskLayout.of(plan).component_tasks[component][0], 0, "", "",
                secret=b"")
    task.attach(plan, frozenset(TaskLayout.of(plan).task_component), seed=1)
    task.telemetry.publisher = Metrics()
    task.start_component()
    conn = connect(task, [])
    return task, conn.sent


def running_spout(max_pending: int | None = 100, clock=time.monotonic, **config: object
                  ) -> tuple[Task, SpoutStep, list[list[bytes]]]:
    spout, sent = task_of("numbers", max_pending, **config)
    step = SpoutStep(spout, clock)
    step.control(control_pb2.TopologyStateChange(state=topology_pb2.RUNNING))
    assert step.active
    return spout, step, sent


def settle(step: SpoutStep, kind: int, roots: list[int]) -> None:
    frame = frames.int_frame(kind, step.task.task, roots)
    step.received(frame, frames.split_frames(frame)[0])


def data_frame(task: Task, values: list[int], src: int) -> bytes:
    records = [[[v], (src << frames.ROOT_TASK_SHIFT) | (v + 1), v + 1] for v in values]
    return frames.data_frame(task.task, src, 0, make_serializer(task.conf.serializer)
                             .encode(records))


def test_the_bolt_driver_runs_each_frame_as_a_batch_and_sends_its_output_after_it():
    bolt, sent = task_of("doubler")
    spout_task = TaskLayout.of(bolt.attachment.plan).component_tasks["numbers"][0]
    connect(bolt, [data_frame(bolt, [1, 2], spout_task) + data_frame(bolt, [3], spout_task)])
    step = BoltStep(bolt)
    BoltDriver(step).run()
    assert bolt.user.seen == [1, 2, 3]
    assert step.counts[EXECUTE_COUNT] == 3
    # One flush per input frame: the first frame's output went before the second ran.
    assert [[f[4] for f in flush] for flush in sent] == [[frames.ACK], [frames.ACK]]


class Awaiting(Bolt):
    """Acks its input only from wake(), on its second wake-up after the input came: as a
    bolt acking on an outside client's callbacks (a Kafka producer's delivery reports)."""

    def prepare(self, config, context, collector):
        self.held, self.called_back, self.wakes = [], [], 0

    def execute(self, tup):
        self.held.append(tup)

    def wake(self):
        self.wakes += 1
        for tup in self.called_back:
            self.collector.ack(tup)
        self.called_back, self.held = self.held, []
        return 0.005 if self.called_back else None


class SleepingConn(Conn):
    """Each empty poll waits as long as it was asked to (up to 10 ms), and says so."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.waits: list[float] = []

    def poll(self, timeout, read=True):
        if not self.reads:
            self.waits.append(timeout)
            time.sleep(min(timeout, 0.01))
        return super().poll(timeout, read)


def test_the_bolt_driver_wakes_a_bolt_when_it_asks_without_waiting_for_input():
    bolt, sent = task_of("doubler", bolt=Awaiting)
    spout_task = TaskLayout.of(bolt.attachment.plan).component_tasks["numbers"][0]
    conn = connect(bolt, [data_frame(bolt, [1, 2], spout_task)], cls=SleepingConn)
    BoltDriver(BoltStep(bolt)).run()
    # Woken after the frame, again when it asked (acking then), and not after.
    assert bolt.user.wakes == 2 and not bolt.user.held and not bolt.user.called_back
    assert [[f[4] for f in flush] for flush in sent] == [[frames.ACK]]
    assert isinstance(conn, SleepingConn)
    assert conn.waits[0] <= 0.005 < min(conn.waits[1:])


def test_the_spout_driver_emits_up_to_its_window_and_hands_acks_to_the_spout():
    spout, step, _ = running_spout(max_pending=5)
    SpoutDriver(step).run()
    assert spout.user.n == 5 and len(spout.emitter.pending) == 5  # the window is full
    settle(step, frames.ACKED, list(spout.emitter.pending)[:2])
    assert sorted(spout.user.acked) == [0, 1] and step.counts[ACK_COUNT] == 2


def test_a_latency_led_window_of_one_grows_when_its_tree_comes_back_quickly():
    # The window starts at one tree; its ack leaves none in flight, yet the window was
    # full with one: under the latency target it must grow, or the spout emits one tree
    # per round trip for ever, whatever the parallelism downstream.
    now = [0.0]  # a clock of its own: trees come back at once, however loaded the host
    spout, step, _ = running_spout(max_pending=None, clock=lambda: now[0])
    now[0] += EAGER_SECS
    limits = []
    for _ in range(4):
        connect(spout, [], empty_polls=20)
        SpoutDriver(step).run()
        roots = list(spout.emitter.pending)
        assert len(roots) == step.window.limit  # it emitted up to its window
        settle(step, frames.ACKED, roots)
        limits.append(step.window.limit)
    assert limits == [2, 4, 8, 16]
    spout.telemetry.publisher = published = Published()
    step.publish()
    assert published.samples[-1].gauges[WINDOW_LIMIT] == 16


class WaitingConn(Conn):
    """Each empty poll waits 10 ms, as a poll for acks that do not come."""

    def poll(self, timeout, read=True):
        if not self.reads:
            time.sleep(0.01)
        return super().poll(timeout, read)


class Published:
    def __init__(self) -> None:
        self.samples: list = []

    def publish(self, metrics):
        self.samples.append(metrics)


def test_a_spout_counts_the_time_its_window_held_it_and_publishes_its_source_lag():
    spout, step, _ = running_spout(max_pending=5)
    connect(spout, [], empty_polls=20, cls=WaitingConn)
    began = time.monotonic()
    SpoutDriver(step).run()
    took = (time.monotonic() - began) * 1000
    # Full after its first emits (one a turn, just after activation), then the rest of
    # its 20 polls of at least 10 ms each with no acks.
    assert 10 * 10 <= step.held_ms <= took
    spout.telemetry.publisher = published = Published()
    step.publish()
    assert SOURCE_LAG not in published.samples[-1].gauges  # Spout.source_lag: None
    spout.user.source_lag = lambda: 1234
    step.publish()
    assert published.samples[-1].gauges[SOURCE_LAG] == 1234
    assert published.samples[-1].counters[WINDOW_HELD_MS] == step.held_ms


def test_expired_trees_go_to_fail_and_are_counted_as_timeouts():
    spout, step, _ = running_spout()
    SpoutDriver(step).run()
    settle(step, frames.EXPIRED, [next(iter(spout.emitter.pending))])
    assert spout.user.failed == [0] and step.counts[TIMEOUT_COUNT] == 1


def test_a_rollback_unwinds_the_driver_and_keeps_what_came_after_it():
    spout, step, _ = running_spout()
    restore = frames.control_frame(control_pb2.RestoreState(checkpoint_id="c1", txid=3))
    later = frames.control_frame(control_pb2.StartProcessing(txid=3))
    connect(spout, [restore + later])
    with pytest.raises(RolledBack) as rolled:
        SpoutDriver(step).run()
    assert rolled.value.message.txid == 3
    data, found = step.backlog()
    assert [k for k, *_ in found] == [frames.CONTROL]
    assert frames.parse_control(memoryview(data)[found[0][2]:found[0][3]]).txid == 3


def test_the_pacer_waits_for_acks_only_after_a_slow_idle_call():
    pacer = SpoutPacer(TopologyConfig.read({}, "t"))
    pacer.idle(10.0, 10.0001)  # fast: a spout with nothing to emit right now
    assert not pacer.awaiting_acks(10.0001) and pacer.eager_until == 0.0
    pacer.idle(10.0, 10.5)  # slow: a spout that sleeps when idle
    assert pacer.awaiting_acks(10.5) and not pacer.awaiting_acks(10.5 + MAX_ACK_WAIT)
    assert pacer.eager_until == pytest.approx(10.5 + EAGER_SECS)
    assert pacer.burst_end(100, pacer.burst_bytes / 4) == 104


# -- the config keys that shape a task's bursts and flushes -------------------------------


def spout_bursts(max_pending: int | None = 30, polls: int = 1000, **config: object
                 ) -> list[int]:
    """The spout's emits between two flushes, over one run of its driver (it stops after
    `polls` empty polls of its connection)."""
    spout, step, _ = running_spout(max_pending, **config)
    step.pacer.eager_until = 0.0  # not the bursts of one emit just after activation
    conn = connect(spout, [], empty_polls=polls)
    at_flush: list[int] = []
    conn.send = lambda data: at_flush.append(spout.user.n)  # type: ignore[method-assign]
    SpoutDriver(step).run()
    return [b - a for a, b in zip([0, *at_flush], at_flush, strict=False) if b > a]


@pytest.mark.parametrize(("key", "value", "most"), [
    pytest.param(key, value, most, marks=pytest.mark.compat(f"config/{key}"))
    for key, value, most in [("heronbridge.spout.burst", 3, 3),
                             ("heronbridge.emit.batch.size.bytes", 1, 1),
                             ("heronbridge.emit.batch.time.ms", 0.001, 1)]])
def test_a_spouts_burst_ends_where_its_key_says(key, value, most):
    assert max(spout_bursts()) > most  # by default a burst fills the window (or 5 ms)
    bursts = spout_bursts(**{key: value})
    assert sum(bursts) == 30 and max(bursts) <= most, bursts


@pytest.mark.compat("config/heronbridge.spout.latency.target.ms")
def test_a_latency_target_of_zero_leaves_the_window_open():
    assert spout_bursts(None, 3)[0] == 1  # the latency-led window starts at one tree
    assert spout_bursts(None, 3, **{"heronbridge.spout.latency.target.ms": 0})[0] > 1


@pytest.mark.compat("config/heronbridge.execute.batch.time.ms")
def test_a_long_input_batch_sends_its_output_every_execute_batch_time():
    def flushes(**config: object) -> int:
        bolt, sent = task_of("doubler", **config)
        spout_task = TaskLayout.of(bolt.attachment.plan).component_tasks["numbers"][0]
        connect(bolt, [data_frame(bolt, list(range(128)), spout_task)])
        BoltDriver(BoltStep(bolt)).run()
        assert bolt.user.seen == list(range(128))
        return len(sent)

    assert flushes() < 8  # by default every 5 ms: the frame takes far less than 35 ms
    assert flushes(**{"heronbridge.execute.batch.time.ms": 0.001}) == 8  # every 16 tuples


@pytest.mark.compat("config/heronbridge.serializer")
def test_tuple_values_travel_as_the_serializer_key_says():
    def first_data_frame(**config: object) -> bytes:
        spout, step, sent = running_spout(1, **config)
        SpoutDriver(step).run()
        return next(bytes(f) for flush in sent for f in flush if f[4] == frames.DATA)

    assert b"[[[0]," in first_data_frame(**{"heronbridge.serializer": "json"})
    assert b"\x91\x93\x91\x00" in first_data_frame()  # msgpack: [[[0], root, edge]]


def test_a_python_task_sent_storms_kryo_bytes_names_what_it_expected(caplog):
    """Storm's Kryo bytes (msgpack extension 75) go only from a Java task to a Java task; a
    Python task that receives them anyway skips the frame, saying where and what came."""
    bolt, _ = task_of("doubler")
    spout_task = TaskLayout.of(bolt.attachment.plan).component_tasks["numbers"][0]
    kryo = msgspec.msgpack.Ext(KRYO_EXT, b"\x01\x02\x03")
    records = msgspec.msgpack.encode([[[kryo], (spout_task << frames.ROOT_TASK_SHIFT) | 1, 1]])
    connect(bolt, [frames.data_frame(bolt.task, spout_task, 0, records),
                   data_frame(bolt, [5], spout_task)])
    with caplog.at_level(logging.ERROR):
        BoltDriver(BoltStep(bolt)).run()
    assert bolt.user.seen == [5]  # the next frame ran
    assert (f"topology 'drivers', component 'doubler', task {bolt.task}: skipped a malformed data "
            f"frame (from task {spout_task}, stream #0) from the stream manager (ValueError: "
            "expected JSON-like values "
            "(what Storm's multilang gives a task that is not Java), received a Java value in "
            "Storm's Kryo bytes, which only a Java task reads (extension type 75, 3 bytes))"
            ) in caplog.text
    # The stream manager, reading a dropped frame's roots, leaves the value as it is.
    assert make_serializer("msgpack").decode(records)[0][1] == \
        (spout_task << frames.ROOT_TASK_SHIFT) | 1
