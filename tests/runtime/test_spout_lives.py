"""A restarted spout's trees are not its previous life's: acks and fails still on their
way from the old life find nothing to complete or fail."""

from __future__ import annotations

from rt_components import KeySpout, RecordingBolt

from heronbridge.runtime import TopologyBuilder
from heronbridge.runtime.api import tuple_class
from heronbridge.runtime.instance.emitter import BoltEmitter, SpoutEmitter
from heronbridge.runtime.plan import TaskLayout
from heronbridge.runtime.stream_manager.acking import XorTracker
from heronbridge.runtime.wire import frames
from heronbridge.runtime.wire.serde import make_serializer

SER = make_serializer("msgpack")


def plan():
    b = TopologyBuilder("lives", {"topology.reliability.mode": "ATLEAST_ONCE"})
    b.spout("src", KeySpout)
    b.bolt("sink", RecordingBolt, inputs=["src"])
    return b.build()


def split(out: list[bytes]) -> tuple[list[int], list]:
    """(init or ack pairs, data tuples) of a flush."""
    pairs, tuples = [], []
    for frame in out:
        if frame[4] == frames.DATA:
            cls = tuple_class("src", "default", 1, ("key", "seq"))
            tuples += SER.typed(cls)(frame[frames.DATA_HEADER_SIZE:])
        else:
            pairs += frames.ints_from(memoryview(frame)[frames.HEADER_SIZE:]).tolist()
    return pairs, tuples


def test_late_acks_and_fails_of_a_previous_life_touch_no_tree_of_the_new_one():
    p = plan()
    layout = TaskLayout.of(p)
    spout_task, sink_task = layout.component_tasks["src"][0], layout.component_tasks["sink"][0]
    tracker, done, failed = XorTracker(), [], []

    def life():
        em = SpoutEmitter(p, spout_task, SER, True, frozenset())
        for n in range(3):
            em.emit(["k", n], msg_id=n)
        inits, tuples = split(em.flush())
        tracker.init(inits, done)
        return em, tuples

    old, old_tuples = life()
    tracker.forget_task(spout_task, frames.ROOT_TASK_SHIFT)  # the spout died
    new, new_tuples = life()
    assert not set(old.pending) & set(new.pending)

    # The bolt acks one of the old life's tuples and fails another, late.
    bolt = BoltEmitter(p, sink_task, SER, True, frozenset())
    bolt.ack(old_tuples[0])
    bolt.fail(old_tuples[1])
    for frame in bolt.flush():
        body = frames.ints_from(memoryview(frame)[frames.HEADER_SIZE:]).tolist()
        (tracker.ack if frame[4] == frames.ACK else tracker.fail)(body, failed)
    assert failed == [] and done == []

    for tup in new_tuples:  # the new life's trees complete as they should
        bolt.ack(tup)
    acks, _ = split(bolt.flush())
    tracker.ack(acks, done)
    assert sorted(done) == sorted(new.pending) and len(tracker) == 0
