"""XOR acking: trees complete exactly when every tuple in them is acked, in any order."""

from __future__ import annotations

import random

import pytest
from rt_components import KeySpout, RecordingBolt

from heronbridge.runtime import Grouping, SerializationError, TopologyBuilder
from heronbridge.runtime.api import Tuple, tuple_class
from heronbridge.runtime.instance.emitter import BoltEmitter, SpoutEmitter
from heronbridge.runtime.plan import TaskLayout
from heronbridge.runtime.stream_manager.acking import XorTracker
from heronbridge.runtime.wire import frames
from heronbridge.runtime.wire.serde import make_serializer


def plan():
    b = TopologyBuilder("acking", {"topology.reliability.mode": "ATLEAST_ONCE"})
    b.spout("src", KeySpout)
    b.bolt("mid", RecordingBolt, inputs={"src": Grouping.ALL}, par=2)
    b.bolt("end", RecordingBolt, inputs=["mid"], par=2)
    return b.build()


class Harness:
    """A spout, the stream manager's tracker, and bolts, wired without processes."""

    def __init__(self):
        self.plan = plan()
        layout = TaskLayout.of(self.plan)
        ser = make_serializer("msgpack")
        self.spout = SpoutEmitter(self.plan, layout.component_tasks["src"][0], ser, True,
                                  frozenset(), seed=1)
        self.bolts = {t: BoltEmitter(self.plan, t, ser, True, frozenset(), seed=t)
                      for c in ("mid", "end") for t in layout.component_tasks[c]}
        self.tracker = XorTracker()
        self.completed: list[int] = []
        self.inbox: dict[int, list[Tuple]] = {t: [] for t in self.bolts}
        self.serializer = ser
        self.layout = layout

    def deliver(self, out_frames: list[bytes]) -> None:
        """Apply control frames to the tracker; queue data frames' tuples by task."""
        for frame in out_frames:
            kind = frame[4]
            if kind == frames.DATA:
                _, _, dest, src, _stream = frames.DATA_HEADER.unpack_from(frame)
                cls = tuple_class(self.layout.task_component[src], "default", src)
                batch = self.serializer.typed(cls)(frame[frames.DATA_HEADER_SIZE:])
                self.inbox[dest].extend(batch)
            else:
                body = frames.ints_from(memoryview(frame)[frames.HEADER_SIZE:]).tolist()
                if kind == frames.INIT:
                    self.tracker.init(body, self.completed)
                elif kind == frames.ACK:
                    self.tracker.ack(body, self.completed)
                elif kind == frames.FAIL:
                    self.tracker.fail(body, self.completed)


def test_a_tree_completes_only_after_its_last_ack_whatever_the_order():
    h = Harness()
    h.spout.emit(["k", 1], msg_id="m1")
    h.deliver(h.spout.flush())
    (root,) = h.spout.pending
    mids = [t for t, c in h.layout.task_component.items() if c == "mid"]
    ends = [t for t, c in h.layout.task_component.items() if c == "end"]
    held = []
    for t in mids:  # all grouping: both mid tasks got a copy
        (tup,) = h.inbox[t]
        h.bolts[t].emit(["k", 1], anchors=tup)
        h.bolts[t].emit(["k", 2], anchors=tup)
        h.bolts[t].ack(tup)
        held.append(h.bolts[t].flush())
    # Deliver the children first and ack them before the parents' acks arrive.
    data = [f for fs in held for f in fs if f[4] == frames.DATA]
    acks = [f for fs in held for f in fs if f[4] != frames.DATA]
    h.deliver(data)
    children = [tup for t in ends for tup in h.inbox[t]]
    assert len(children) == 4
    random.Random(3).shuffle(children)
    for tup in children:
        owner = ends[0] if tup in h.inbox[ends[0]] else ends[1]
        h.bolts[owner].ack(tup)
        h.deliver(h.bolts[owner].flush())
        assert h.completed == []
    h.deliver(acks[:1])
    assert h.completed == []
    h.deliver(acks[1:])
    assert h.completed == [root]


def test_a_failed_tuple_fails_its_tree_once():
    h = Harness()
    h.spout.emit(["k", 1], msg_id="m1")
    h.deliver(h.spout.flush())
    t = next(t for t in h.inbox if h.inbox[t])
    tup = h.inbox[t][0]
    h.bolts[t].fail(tup)
    h.bolts[t].fail(tup)  # a second fail (or ack) of the same tuple changes nothing
    h.bolts[t].ack(tup)
    h.deliver(h.bolts[t].flush())
    assert h.completed == list(h.spout.pending)


def test_a_tuple_anchored_to_two_inputs_of_one_tree_still_completes():
    h = Harness()
    h.spout.emit(["k", 1], msg_id="m1")
    h.deliver(h.spout.flush())
    mids = [t for t, c in h.layout.task_component.items() if c == "mid"]
    a, b = (h.inbox[t][0] for t in mids)
    # The same root reaches one task twice: anchor one child to both copies.
    em = h.bolts[mids[0]]
    em.emit(["k", 3], anchors=[a, b])
    em.ack(a)
    em.ack(b)
    h.deliver(em.flush())
    child = next(tup for t in h.inbox if h.layout.task_component[t] == "end"
                 for tup in h.inbox[t])
    owner = next(t for t in h.inbox if child in h.inbox[t])
    assert h.completed == []
    h.bolts[owner].ack(child)
    h.deliver(h.bolts[owner].flush())
    assert len(h.completed) == 1


def test_a_tuple_with_no_subscriber_completes_at_once():
    tracker = XorTracker()
    done: list[int] = []
    tracker.init([123, 0], done)
    assert done == [123]


def test_roots_expire_after_the_buckets_rotate_out():
    tracker = XorTracker(buckets=3)
    done: list[int] = []
    tracker.init([10, 5, 11, 6], done)
    assert tracker.rotate() == []
    tracker.ack([10, 5], done)  # found in an older bucket
    assert done == [10]
    assert tracker.rotate() == []
    assert tracker.rotate() == [11]
    assert len(tracker) == 0


def test_unencodable_values_are_reported_after_the_good_ones_are_sent():
    h = Harness()
    h.spout.emit(["k", 1], msg_id="ok-1")
    h.spout.emit(["k", 1 + 2j], msg_id="bad")
    h.spout.emit(["k", 3], msg_id="ok-2")
    with pytest.raises(SerializationError) as err:
        h.spout.flush()
    message = str(err.value)
    assert "topology 'acking', component 'src', task" in message
    assert "cannot encode" in message and "(1+2j)" in message
    h.deliver(err.value.frames)
    values = [tup.values for t in h.inbox for tup in h.inbox[t]]
    assert sorted(v[1] for v in values) == [1, 1, 3, 3]  # both good tuples, to both tasks
