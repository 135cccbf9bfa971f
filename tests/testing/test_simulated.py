"""complete_topology and SimulatedTopology: the whole topology in this process, mocked
sources that keep their spout's streams, simulated ticks and timeouts, and what each
component emitted, acked, failed and logged."""

from __future__ import annotations

import logging
import os
import sys
import types
from pathlib import Path

import pytest

from heronbridge.runtime import Bolt, Grouping, Spout, Stream, TopologyBuilder
from heronbridge.testing import SimulatedTopology, TestingError, complete_topology

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
log = logging.getLogger("user.split")


class NeverSpout(Spout):  # replaced by mocked sources in these tests
    outputs = [Stream("default", ("sentence",)), Stream("errors", ("code", "text"))]

    def next_tuple(self):
        msg = "a mocked spout's own code must not run"
        raise AssertionError(msg)


class UpperBolt(Bolt):
    outputs = ["sentence"]

    def execute(self, tup):
        log.warning("upper-casing %r", tup.values[0])
        self.collector.emit([tup.values[0].upper()], anchors=tup)
        self.collector.ack(tup)


class ErrorsBolt(Bolt):
    outputs = ["line"]

    def execute(self, tup):
        self.collector.emit([f"{tup.value('code')}: {tup.value('text')}"], anchors=tup)
        self.collector.ack(tup)


class HoldingBolt(Bolt):
    """Acks nothing: its trees time out."""

    outputs = ["n"]

    def execute(self, tup):
        pass


class WindowBolt(Bolt):
    """Sums its input per tick (a tumbling window) and acks it then."""

    outputs = ["total"]

    def prepare(self, config, context, collector):
        self.window = []

    def execute(self, tup):
        if tup.is_tick:
            self.collector.emit([sum(t.values[0] for t in self.window)])
            for t in self.window:
                self.collector.ack(t)
            self.window = []
        else:
            self.window.append(tup)


class CountingSpout(Spout):
    outputs = ["n"]

    def open(self, config, context, collector):
        self.n, self.limit = 0, config.get("count", 5)

    def next_tuple(self):
        if self.n < self.limit:
            self.collector.emit([self.n], msg_id=self.n)
            self.n += 1


class EndlessSpout(Spout):
    outputs = ["n"]

    def next_tuple(self):
        self.collector.emit([1])


class CrashingBolt(Bolt):
    outputs = ["n"]

    def execute(self, tup):
        msg = f"cannot take {tup.values[0]!r}"
        raise ValueError(msg)


AT_LEAST_ONCE = {"topology.reliability.mode": "ATLEAST_ONCE"}


def two_streams():
    b = TopologyBuilder("words", AT_LEAST_ONCE)
    lines = b.spout("lines", NeverSpout)
    b.bolt("upper", UpperBolt, inputs={lines: Grouping.by_fields("sentence")}, par=2)
    b.bolt("errors", ErrorsBolt, inputs=[lines["errors"]])
    return b.build()


def test_completes_a_runtime_topology_file_with_mocked_sources():
    result = complete_topology(EXAMPLES / "runtime" / "wordcount.py", mocked_sources={
        "sentences": [["a b a"], ("b",)]})
    assert sorted(result.emitted("count")) == [["a", 1], ["a", 2], ["b", 1], ["b", 2]]
    assert result.emitted("split") == [["a"], ["b"], ["a"], ["b"]]
    assert result.anchors("split") == [[["a b a"]]] * 3 + [[["b"]]]
    assert sorted(result.acked("sentences")) == [0, 1]  # positions in the mocked input
    assert result.failed("sentences") == []
    assert sorted(map(tuple, result.acked("split"))) == [("a b a",), ("b",)]


def test_mocked_sources_keep_every_stream_the_spout_declares():
    result = complete_topology(two_streams(), mocked_sources={"lines": {
        "default": [["a"], ("b",)], "errors": [[7, "bad line"]]}})
    assert sorted(result.emitted("upper")) == [["A"], ["B"]]
    assert result.emitted("errors") == [["7: bad line"]]
    assert result.emitted("lines", "errors") == [[7, "bad line"]]
    assert sorted(result.acked("lines")) == [0, 1, 2]
    assert sorted(result.logs("upper")) == ["upper-casing 'a'", "upper-casing 'b'"]
    assert result.logs("errors") == []


@pytest.mark.parametrize(("given", "expected"), [
    ({"nope": [["x"]]}, "expected the name of one of the topology's spouts ['lines']"),
    ({"lines": {"other": [["x"]]}}, "declares ['default', 'errors']"),
    ({"lines": [["x", "y"]]}, "expected a list of 1 values for fields ['sentence']"),
    ({"lines": {"errors": ["x"]}}, "tuple 0: expected a list of 2 values"),
])
def test_refuses_mocked_input_the_spout_does_not_declare(given, expected):
    with pytest.raises(TestingError, match="topology 'words'") as caught:
        complete_topology(two_streams(), mocked_sources=given)
    assert expected in str(caught.value)


def test_timeouts_fail_trees_nobody_acks_in_simulated_time():
    b = TopologyBuilder("held", {**AT_LEAST_ONCE, "topology.message.timeout.secs": 30})
    numbers = b.spout("numbers", CountingSpout, config={"count": 3})
    b.bolt("hold", HoldingBolt, inputs=[numbers])
    result = complete_topology(b.build())
    assert sorted(result.failed("numbers")) == [0, 1, 2]
    assert result.acked("numbers") == []
    assert result.seconds >= 30  # trees expire between the timeout and 1.5 of it
    assert result.seconds <= 45


def test_ticks_come_on_simulated_time_and_feed_adds_input():
    b = TopologyBuilder("window", AT_LEAST_ONCE)
    numbers = b.spout("numbers", CountingSpout)
    b.bolt("sum", WindowBolt, inputs=[numbers],
           config={"topology.tick.tuple.freq.secs": 10})
    with SimulatedTopology(b.build(), mocked_sources={"numbers": [[1], [2]]}) as topo:
        first = topo.complete()  # the window's tick settles the trees
        assert topo.clock == 10
        assert first.emitted("sum") == [[3]]
        topo.feed("numbers", [[10]])
        result = topo.advance(20)
    assert topo.clock == 30
    assert result.emitted("sum") == [[3], [10], [0]]
    assert result.record("sum").ticks == 3
    assert sorted(result.acked("numbers")) == [0, 1, 2]


def test_max_spout_pending_holds_a_spout_until_its_trees_settle():
    b = TopologyBuilder("paced", {**AT_LEAST_ONCE, "topology.max.spout.pending": 2})
    numbers = b.spout("numbers", CountingSpout, config={"count": 5})
    b.bolt("sum", WindowBolt, inputs=[numbers], config={"topology.tick.tuple.freq.secs": 1})
    result = complete_topology(b.build())
    assert result.emitted("sum") == [[0 + 1], [2 + 3], [4]]  # two at a time
    assert result.seconds == 3


def test_a_component_that_raises_is_named_with_its_task():
    b = TopologyBuilder("crash", AT_LEAST_ONCE)
    numbers = b.spout("numbers", NeverSpout)
    b.bolt("crasher", CrashingBolt, inputs=[numbers])
    with pytest.raises(TestingError, match=r"topology 'crash', component 'crasher', task \d+: "
                       r"failed while taking what it was sent .* ValueError: cannot take 'x'"):
        complete_topology(b.build(), mocked_sources={"numbers": [["x"]]})


def test_a_spout_that_never_runs_out_is_refused():
    b = TopologyBuilder("endless")
    b.spout("ones", EndlessSpout)
    with pytest.raises(TestingError, match="component 'ones'.*still emitting after"):
        complete_topology(b.build())


def test_a_streamparse_batching_bolt_batches_on_simulated_ticks(tmp_path):
    records = [["a", 1], ["b", 2], ["a", 3], ["c", 4]]
    # A window of ten trees: the spout emits them all at once (see the next test).
    with SimulatedTopology(EXAMPLES / "storm_topologies" / "batching",
                           mocked_sources={"records": records}, workdir=tmp_path,
                           config={"topology.max.spout.pending": 10}) as topo:
        topo.advance(0)
        assert topo.result().emitted("totals") == []  # before the first tick: held
        result = topo.complete()
    assert sorted(result.emitted("totals")) == [["a", 2, 4], ["b", 1, 2], ["c", 1, 4]]
    assert sorted(result.acked("records")) == [0, 1, 2, 3]
    # ticks each second; pystorm processes a batch once its tick count exceeds
    # ticks_between_batches (1), at the second tick
    assert result.seconds == 2
    assert result.record("totals").ticks == 4  # two tasks


def test_the_latency_led_window_holds_a_spout_whose_trees_wait_for_a_batch(tmp_path):
    """As in its process: without topology.max.spout.pending the window starts at one
    tree (at 1 s, hearing nothing, it doubles to two: still full by its hysteresis). The
    first batch runs at the second tick, 2 s; its ack, far over the latency target, sets
    the window to its floor of 16, and the other three records go then, to be batched at
    4 s."""
    records = [["a", 1], ["b", 2], ["a", 3], ["c", 4]]
    result = complete_topology(EXAMPLES / "storm_topologies" / "batching",
                               mocked_sources={"records": records}, workdir=tmp_path)
    assert result.emitted("totals") == [["a", 1, 1], ["b", 1, 2], ["a", 1, 3], ["c", 1, 4]]
    assert sorted(result.acked("records")) == [0, 1, 2, 3]
    assert result.seconds == 4


def test_a_streamparse_project_leaves_the_process_as_it_found_it(tmp_path):
    cwd, path, handlers = os.getcwd(), list(sys.path), list(logging.getLogger().handlers)
    result = complete_topology(EXAMPLES / "storm_topologies" / "wordcount",
                               mocked_sources={"word_spout": [["x"]]}, workdir=tmp_path)
    assert result.emitted("count_bolt") == [["x", 1]]
    assert (os.getcwd(), sys.path, logging.getLogger().handlers) == (cwd, path, handlers)
    assert "bolts.wordcount" not in sys.modules  # the project's modules are forgotten


def test_another_projects_modules_of_the_same_names_do_not_stand_in(tmp_path,
                                                                    monkeypatch):
    """A session that imported another project's `bolts` (a second project in the same
    repository, say) still tests this project's own, and gets the other's back."""
    other = types.ModuleType("bolts")
    other.__path__ = [str(tmp_path / "other")]
    monkeypatch.setitem(sys.modules, "bolts", other)
    result = complete_topology(EXAMPLES / "storm_topologies" / "wordcount",
                               mocked_sources={"word_spout": [["x"]]}, workdir=tmp_path)
    assert result.emitted("count_bolt") == [["x", 1]]
    assert sys.modules["bolts"] is other and "bolts.wordcount" not in sys.modules


def test_a_heronpy_topology_file():
    result = complete_topology(EXAMPLES / "heronpy" / "wordcount.py", mocked_sources={
        "sentences": [["the cow and the moon"]]})
    assert sorted(result.emitted("count")) == [
        ["and", 1], ["cow", 1], ["moon", 1], ["the", 1], ["the", 2]]
    assert result.acked("sentences") == [0]


def test_names_what_it_cannot_load():
    with pytest.raises(TestingError, match="expected a LogicalPlan, a project folder"):
        complete_topology(42)
