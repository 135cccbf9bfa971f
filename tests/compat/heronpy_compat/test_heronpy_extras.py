"""BatchingBolt, TicklessBatchingBolt and ReliableSpout on heronpy, with pystorm's
behaviour."""

from __future__ import annotations

import pytest
from heronpy_kit import Hosted, build_plan
from hp_components import KeyBatcher, NumberSpout, Replaying, TimedBatcher

from heronbridge.runtime.api.tuple import tick_tuple
from heronbridge.shims.heronpy import extras

TICK = "topology.tick.tuple.freq.secs"


def batching(mode="ATLEAST_ONCE", tick_config=None):
    def build(b):
        numbers = b.add_spout("numbers", NumberSpout, 1)
        b.add_bolt("batcher", KeyBatcher, 1, inputs=[numbers], config={TICK: 1})
        b.add_bolt("timed", TimedBatcher, 1, inputs=[numbers], config=tick_config)
        b.add_spout("replaying", Replaying, 1)

    return build_plan("batching", build, {"topology.reliability.mode": mode})


def test_batches_by_key_go_after_more_than_ticks_between_batches_ticks_then_are_acked():
    bolt = Hosted(batching(), "batcher")
    for n, key in enumerate(["a", "a", "b"], start=1):
        bolt.receive("numbers", [n, key], root=n, edge=n)
    bolt.host.execute(tick_tuple(1))
    assert bolt.sent() == [] and bolt.emitter.acked == 0  # pystorm: strictly more ticks
    bolt.host.execute(tick_tuple(1))
    assert bolt.emitter.emitted == 2 and bolt.emitter.acked == 3  # [a, 2] and [b, 1]
    assert sorted(bolt.settled()["ack"][0::2]) == [1, 2, 3]
    bolt.host.execute(tick_tuple(1))
    bolt.host.execute(tick_tuple(1))
    assert bolt.emitter.emitted == 2  # no batches, nothing more


def test_emits_in_a_batch_are_anchored_to_the_whole_batch():
    captured = []
    bolt = Hosted(batching(), "batcher")
    bolt.emitter.emit = lambda values, stream, anchors, direct: captured.append(anchors) or ()
    bolt.host._bind_fast()
    rt = [bolt.receive("numbers", [n, "a"], root=n, edge=n) for n in (1, 2)]
    for _ in range(2):
        bolt.host.execute(tick_tuple(1))
    assert captured == [rt]


def test_a_batch_that_raises_fails_every_pending_tuple_and_the_error_goes_on():
    bolt = Hosted(batching(), "batcher")
    bolt.receive("numbers", [1, "a"], root=1, edge=1)
    bolt.receive("numbers", [2, "boom"], root=2, edge=2)
    bolt.receive("numbers", [3, "z"], root=3, edge=3)
    bolt.host.execute(tick_tuple(1))
    with pytest.raises(ValueError, match="boom"):
        bolt.host.execute(tick_tuple(1))
    settled = bolt.settled()
    assert settled["ack"][0::2] == [1]  # "a" went before "boom"
    assert sorted(settled["fail"]) == [2, 3]


def test_tickless_batches_run_on_ticks_set_to_their_period(monkeypatch):
    plan = batching()
    assert plan.components["timed"].config[TICK] == 5
    assert batching(tick_config={TICK: 1}).components["timed"].config[TICK] == 1
    bolt = Hosted(plan, "timed")
    now = [100.0]
    monkeypatch.setattr(extras.time, "monotonic", lambda: now[0])
    bolt.receive("numbers", [1, "a"], root=1, edge=1)
    bolt.host.execute(tick_tuple(5))  # the first tick: due
    assert bolt.emitter.acked == 1
    bolt.receive("numbers", [2, "a"], root=2, edge=2)
    now[0] += 4.6  # early, but within a tenth of the period
    bolt.host.execute(tick_tuple(5))
    assert bolt.emitter.acked == 2
    bolt.receive("numbers", [3, "a"], root=3, edge=3)
    now[0] += 1
    bolt.host.execute(tick_tuple(5))
    assert bolt.emitter.acked == 2  # not yet


def test_a_reliable_spout_replays_failures_up_to_max_fails_then_acks():
    spout = Hosted(batching(), "replaying")
    for _ in range(3):
        spout.host.next_tuple()
    user = spout.user
    assert set(user.unacked_tuples) == {0, 1, 2}
    spout.host.ack(1)
    for _ in range(2):
        spout.host.fail(0)
    assert user.failed_tuples[0] == 2
    assert len(spout.emitter.pending) == 5  # three emits, two replays (none settled here)
    spout.host.fail(0)  # past max_fails: given up, acked
    assert 0 not in user.unacked_tuples and set(user.unacked_tuples) == {2}
    spout.host.fail(99)  # unknown: logged, ignored
    with pytest.raises(ValueError, match="needs a tup_id"):
        user.emit([7])
