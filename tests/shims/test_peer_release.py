"""Input tuples a multilang component holds are released once their trees must have
expired, so a bolt that never acks does not grow without bound; acks, fails and anchors
of a released tuple are then ignored, and nothing is released while trees cannot expire."""

from __future__ import annotations

import logging

import pytest

from heronbridge.runtime.api import tuple_class
from heronbridge.shims.common import peer
from heronbridge.shims.common.peer import StormPeer
from heronbridge.shims.storm import ShimError

TIMEOUT = 30.0
Word = tuple_class("words", "default", 1, ("word",))


class Collector:
    def __init__(self):
        self.acked, self.failed, self.emitted = [], [], []

    def ack(self, tup):
        self.acked.append(tup)

    def fail(self, tup):
        self.failed.append(tup)

    def emit(self, values, stream="default", anchors=None, direct_task=None):
        self.emitted.append((values, list(anchors or [])))
        return [2]


class Host:
    topology, component, task, is_spout = "t", "count", 2, False

    def __init__(self, **config):
        self.collector = Collector()
        self.config = {"topology.message.timeout.secs": TIMEOUT, **config}


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


@pytest.fixture
def clock(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(peer.time, "monotonic", clock)
    return clock


def feed(p: StormPeer, clock: Clock, seconds: float, per_second: int = 10) -> list[str]:
    ids = []
    for _ in range(int(seconds * per_second)):
        clock.now += 1 / per_second
        ids.append(p.tuple_message(Word("w"))["id"])
    return ids


def held(p: StormPeer) -> int:
    return len(p.tuples) + sum(map(len, p._older))


@pytest.mark.parametrize("mode", ["ATLEAST_ONCE", "ATMOST_ONCE"])
def test_a_bolt_that_never_acks_holds_at_most_three_timeouts_of_tuples(clock, caplog, mode):
    p = StormPeer(Host(**{"topology.reliability.mode": mode}))
    first = feed(p, clock, 10)
    for _ in range(20):  # twenty timeouts' worth: the held tuples stop growing
        feed(p, clock, TIMEOUT)
        assert held(p) <= 3 * TIMEOUT * 10 + 1
    assert p.released > 0
    assert "released" in caplog.text and caplog.text.count("released") == 1  # said once
    p.receive({"command": "ack", "id": first[0]})  # too late: ignored
    p.receive({"command": "fail", "id": first[1]})
    p.receive({"command": "emit", "anchors": [first[2]], "tuple": ["x"]})
    assert p.collector.acked == p.collector.failed == []
    assert p.collector.emitted == [(["x"], [])]
    with pytest.raises(ShimError, match="not a tuple this task holds"):
        p.receive({"command": "ack", "id": "999999999"})  # never received


def test_tuples_still_within_their_timeout_are_acked_and_anchored_normally(clock):
    p = StormPeer(Host(**{"topology.reliability.mode": "ATLEAST_ONCE"}))
    ids = feed(p, clock, TIMEOUT * 1.5)  # one generation has aged, none released
    p.receive({"command": "emit", "anchors": [ids[0]], "tuple": ["x"]})
    p.receive({"command": "ack", "id": ids[0]})
    p.receive({"command": "fail", "id": ids[-1]})
    [(_, [anchor])] = p.collector.emitted
    assert anchor is p.collector.acked[0] and len(p.collector.failed) == 1
    with pytest.raises(ShimError, match="already acked or failed"):
        p.receive({"command": "ack", "id": ids[0]})


def test_nothing_is_released_while_trees_cannot_expire(clock, caplog):
    p = StormPeer(Host(**{"topology.reliability.mode": "ATLEAST_ONCE",
                          "topology.enable.message.timeouts": False}))
    ids = feed(p, clock, 5 * TIMEOUT)
    assert held(p) == len(ids) and p.released == 0
    p.receive({"command": "ack", "id": ids[0]})
    assert len(p.collector.acked) == 1
    assert "released" not in caplog.text


def test_released_tuples_leave_a_warning(clock, caplog):
    caplog.set_level(logging.WARNING)
    p = StormPeer(Host())
    feed(p, clock, 4 * TIMEOUT)
    assert "component 'count', task 2: released" in caplog.text


def test_a_late_sync_does_not_answer_a_newer_command():
    """A stopping spout task sends "deactivate" while its child may still owe the sync of
    a `next`: that sync must not pass for the deactivate's, or the child is stopped
    before it hears it."""
    p = StormPeer(Host(), pystorm=True)
    p.command_message("next")
    p.command_message("deactivate")
    assert not p.synced
    p.receive({"command": "sync"})  # the next's
    assert not p.synced
    p.receive({"command": "sync"})  # the deactivate's
    assert p.synced
