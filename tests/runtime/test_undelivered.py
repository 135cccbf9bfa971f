"""The stream manager's policy for data frames it cannot deliver now (issue 25): held for
a task expected back, delivered in order, bounded in time and bytes; the trees of what
is given up fail no sooner than the message timeout."""

from __future__ import annotations

from heronbridge.runtime.stream_manager.undelivered import Undelivered

T = 5.0


def frame(n: int, size: int = 10) -> bytes:
    return bytes([n]) * size


def test_frames_held_for_a_task_come_back_in_order_and_only_for_it():
    u = Undelivered(T, T, 1000)
    for n, task in enumerate([4, 5, 4, 4]):
        assert u.hold(task, frame(n), now=n * 0.1) == []
    assert u.bytes == 40 and sorted(u.tasks()) == [4, 5]
    assert u.release(4) == [frame(0), frame(2), frame(3)]
    assert u.release(4) == []
    assert u.tasks() == [5] and u.bytes == 10
    assert u.release(5) == [frame(1)]
    assert not u and u.bytes == 0
    assert (u.held, u.released, u.given_up) == (4, 4, 0)


def test_over_the_limit_the_oldest_frames_are_given_up_whatever_their_task():
    u = Undelivered(T, T, 25)
    assert u.hold(4, frame(1), now=1.0) == []
    assert u.hold(5, frame(2), now=2.0) == []
    assert u.hold(4, frame(3), now=3.0) == [(1.0, frame(1))]
    assert u.bytes == 20
    assert u.hold(6, frame(4, size=30), now=4.0) == [(2.0, frame(2)), (3.0, frame(3)),
                                                      (4.0, frame(4, size=30))]
    assert not u.tasks() and u.bytes == 0 and u.given_up == 4


def test_a_limit_of_zero_holds_nothing():
    u = Undelivered(T, T, 0)
    assert u.hold(4, frame(1), now=1.0) == [(1.0, frame(1))]
    assert not u


def test_frames_are_held_no_longer_than_the_hold_time():
    u = Undelivered(T, T, 1000)
    u.hold(4, frame(1), now=1.0)
    u.hold(5, frame(2), now=2.0)
    u.hold(4, frame(3), now=3.0)
    assert u.expired(now=5.9) == []
    assert u.expired(now=7.0) == [(1.0, frame(1)), (2.0, frame(2))]
    assert u.release(4) == [frame(3)]


def test_fails_come_due_no_sooner_than_the_timeout_after_the_frame_was_held():
    u = Undelivered(T, T, 1000)
    u.fail_later([11, 12], since=2.0)
    u.fail_later([], since=0.0)  # nothing to fail: nothing kept
    u.fail_later([13], since=1.0)  # given up later, held earlier: due earlier
    assert u
    assert u.fails_due(now=5.9) == []
    assert u.fails_due(now=6.0) == [13]
    assert u.fails_due(now=6.5) == []
    assert u.fails_due(now=100.0) == [11, 12]
    assert not u


def test_frames_of_a_task_no_plan_has_are_given_up_with_the_time_they_were_held():
    u = Undelivered(T, T, 1000)
    u.hold(4, frame(1), now=1.0)
    u.hold(5, frame(2), now=2.0)
    assert u.forget(4) == [(1.0, frame(1))]
    assert u.forget(4) == []
    assert u.tasks() == [5] and u.bytes == 10 and u.given_up == 1
