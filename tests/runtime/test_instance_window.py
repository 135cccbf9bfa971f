"""A spout's in-flight window: max.spout.pending when set, else latency-led."""

from heronbridge.runtime.instance.window import (
    MIN_LIMIT,
    STALL_SECS,
    START_LIMIT,
    InFlightWindow,
)


def test_max_spout_pending_is_the_limit_and_at_most_once_has_none():
    fixed = InFlightWindow(1000, acking=True, target_secs=0.01)
    fixed.acked(5.0, 1000, 0.0)
    assert fixed.limit == 1000 and fixed.resume_below(1024) == 750
    assert InFlightWindow(None, acking=False, target_secs=0.01).limit == float("inf")
    assert InFlightWindow(None, acking=True, target_secs=0).limit == float("inf")
    one = InFlightWindow(1, acking=True, target_secs=0.01)
    assert one.resume_below(1024) == 1  # full at one in flight, free again at none


def test_without_it_the_window_grows_under_the_target_and_shrinks_over_it():
    w = InFlightWindow(None, acking=True, target_secs=0.01)
    assert w.limit == START_LIMIT
    for _ in range(20):  # fast acks, and the window binds: it grows
        w.acked(0.002, int(w.limit), 0.0)
    grown = w.limit
    assert grown > 1000 * START_LIMIT
    w.acked(0.002, 10, 0.0)  # it does not grow past twice what is in flight
    assert w.limit == grown
    for _ in range(20):  # a queue builds: latency over the target shrinks it
        w.acked(0.2, int(w.limit), 0.0)
    assert w.limit == MIN_LIMIT


def test_a_full_window_that_hears_nothing_back_doubles_every_stall():
    w = InFlightWindow(None, acking=True, target_secs=0.01)
    w.stalled(10.0)
    w.stalled(10.5)
    assert w.limit == START_LIMIT
    w.stalled(10.0 + STALL_SECS + 0.1)
    w.stalled(10.0 + 2 * STALL_SECS + 0.2)
    assert w.limit == 4 * START_LIMIT
    w.acked(0.001, 4, 13.0)  # an ack: the stall clock starts again
    w.stalled(13.5)
    assert w.limit == 8 * START_LIMIT
