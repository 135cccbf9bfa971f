"""One component on its own, under its API's semantics: pystorm's auto-ack, batching
bolts on ticks, ReliableSpout's replays; simulated timeouts for a spout's trees."""

from __future__ import annotations

from pathlib import Path

import pytest

from heronbridge.testing import TestingError, assert_emitted, isolate

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "storm_topologies"


def test_a_batching_bolt_processes_its_batch_on_the_tick(tmp_path):
    with isolate(EXAMPLES / "batching", "totals", workdir=tmp_path) as bolt:
        bolt.execute(["a", 1])
        bolt.execute(["a", 2])
        assert bolt.emitted() == []
        assert bolt.acked == []  # held in the batch
        bolt.advance(1)  # the first tick: pystorm counts it, and the batch waits
        assert bolt.emitted() == []
        bolt.advance(1)  # its tick count exceeds ticks_between_batches (1): processed
        assert bolt.emitted() == [["a", 2, 3]]
        assert bolt.acked == [["a", 1], ["a", 2]]
        assert_emitted(bolt, "totals", [["a", 2, 3]])


def test_a_reliable_spout_replays_what_fails_then_gives_up(tmp_path):
    with isolate(EXAMPLES / "reliable", "numbers", workdir=tmp_path,
                 config={"reliable.count": 2, "topology.max.spout.pending": 3}) as spout:
        spout.next_tuple(3)  # the third call finds nothing to emit
        assert spout.emitted() == [[0], [1]]
        assert sorted(spout.pending) == [0, 1]
        spout.ack(0)
        for _ in range(3):  # max_fails = 3: three replays
            spout.fail(1)
        assert spout.emitted() == [[0], [1], [1], [1], [1]]
        spout.fail(1)  # the fourth failure: ReliableSpout gives up (acks it itself)
        assert spout.emitted() == [[0], [1], [1], [1], [1]]
        assert spout.pending == []
        assert spout.acked == [0]  # what the runtime told it
        assert spout.failed == [1, 1, 1, 1]


def test_a_spout_is_held_by_its_in_flight_window_as_in_its_task(tmp_path):
    with isolate(EXAMPLES / "reliable", "numbers", workdir=tmp_path,
                 config={"reliable.count": 5}) as spout:
        spout.next_tuple()  # the latency-led window starts at one tree
        with pytest.raises(TestingError, match=r"task \d+: next_tuple call 1 of 1 is held by "
                           r"its in-flight window: 1 trees pending, limit 1; expected room"):
            spout.next_tuple()
        spout.ack(0)  # back at once: the window doubles
        spout.next_tuple(2)
        assert spout.emitted() == [[0], [1], [2]]
        with pytest.raises(TestingError, match="2 trees pending, limit 2"):
            spout.next_tuple()


def test_a_spouts_trees_time_out_in_simulated_time(tmp_path):
    with isolate(EXAMPLES / "reliable", "numbers", workdir=tmp_path,
                 config={"reliable.count": 1, "topology.message.timeout.secs": 30}) as spout:
        spout.next_tuple()
        spout.advance(29)
        assert spout.failed == []
        spout.advance(1)
        assert spout.failed == [0]
        assert spout.emitted() == [[0], [0]]  # replayed


def test_refuses_input_the_bolt_does_not_subscribe_to(tmp_path):
    with isolate(EXAMPLES / "batching", "totals", workdir=tmp_path) as bolt:
        with pytest.raises(TestingError, match=r"expected an input it subscribes to among "
                           r"\[\('records', 'default'\)\], received source 'records', "
                           r"stream 'other'"):
            bolt.execute(["a", 1], stream="other")
        with pytest.raises(TestingError, match=r"expected 2 values for records:default's "
                           r"fields \['category', 'value'\], received \['a'\]"):
            bolt.execute(["a"])
        with pytest.raises(TestingError, match="next_tuple applies to spouts"):
            bolt.next_tuple()
