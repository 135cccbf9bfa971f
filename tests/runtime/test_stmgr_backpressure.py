"""The stream manager's backpressure, without sockets: causes, peers and the spouts."""

from __future__ import annotations

from heronbridge.runtime.stream_manager.backpressure import Backpressure


def parts():
    told, paused = [], []
    return Backpressure("stmgr-1", told.append, paused.append), told, paused


def test_peers_hear_when_the_first_local_cause_starts_and_the_last_ends():
    bp, told, paused = parts()
    bp.start(("instance", 3))
    bp.start(("stmgr", "stmgr-2"))
    bp.stop(("instance", 3))
    assert told == [True] and paused == [True]
    bp.stop(("stmgr", "stmgr-2"))
    assert told == [True, False] and paused == [True, False]


def test_a_peer_s_backpressure_pauses_the_local_spouts_without_telling_peers():
    bp, told, paused = parts()
    bp.peer("stmgr-2", True)
    bp.peer("stmgr-2", False)
    assert told == [] and paused == [True, False]


def test_time_is_counted_in_all_and_per_cause():
    bp, _, _ = parts()
    bp.start(("instance", 3))
    bp.stop(("instance", 3))
    bp.stop(("instance", 3))  # twice: counted once
    assert set(bp.ms_by_cause()) == {("instance", 3)}
    assert bp.paused_ms() > 0 and bp.ms_by_cause()[("instance", 3)] > 0
    assert not bp.spouts_paused
