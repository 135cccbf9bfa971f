"""Every operator of heronpy's Streamlet API, its output checked against what it should
produce, worked out by hand. Each topology runs in the test process (streamlet_kit):
the real heronpy bolts, hosted as on the runtime, groupings and serializer included;
windows end when the test sends the tick."""

from __future__ import annotations

import datetime
import logging
import os
import subprocess
import sys
from collections import Counter

import pytest
from heronpy.api.bolt.window_bolt import TumblingWindowBolt
from heronpy.streamlet.builder import Builder
from heronpy.streamlet.config import Config
from heronpy.streamlet.generator import Generator
from heronpy.streamlet.transformoperator import TransformOperator
from heronpy.streamlet.windowconfig import WindowConfig
from heronpy_kit import Hosted, build_plan
from hp_components import NumberSpout
from streamlet_kit import InProcess

from heronbridge.runtime.api.tuple import tick_tuple
from heronbridge.shims.heronpy import windows
from heronbridge.shims.heronpy.sink import Sink

SEEN: list = []  # what consume and the sink were handed (functions pickle by reference)


@pytest.fixture(autouse=True)
def _clear_seen():
    SEEN.clear()


class Items(Generator):
    """A source of the given elements, then nothing."""

    def __init__(self, items):
        self.items = list(items)

    def setup(self, context):
        self.left = iter(self.items)

    def get(self):
        return next(self.left, None)


def source(builder, name, items):
    return builder.new_source(Items(items)).set_name(name)


def tumbling(secs=1):
    return WindowConfig.create_tumbling_window(datetime.timedelta(seconds=secs))


def seen(element):
    SEEN.append(element)


class Collect(Sink):
    def setup(self, context):
        SEEN.append(("setup", context.get_task_id()))

    def put(self, element):
        SEEN.append(element)


# -- one element in, some out -------------------------------------------------------------


@pytest.mark.compat("heronpy/Streamlet.map", "heronpy/Streamlet.flat_map",
                    "heronpy/Streamlet.filter")
def test_map_flat_map_and_filter():
    b = Builder()
    numbers = source(b, "numbers", [1, 2, 3, 4, 5, 6])
    numbers.map(lambda x: x * 10).set_name("tens").log()
    numbers.filter(lambda x: x % 2 == 0).set_name("evens").log()
    # a list is spread; a value that is not iterable goes on as it is
    numbers.flat_map(lambda x: [x] * (x % 3) if x < 5 else x).set_name("spread").log()
    run = InProcess(b)
    run.run()
    assert run.out("tens", "log-1") == [10, 20, 30, 40, 50, 60]
    assert run.out("evens", "log-2") == [2, 4, 6]
    assert run.out("spread", "log-3") == [1, 2, 2, 4, 5, 6]


@pytest.mark.compat("heronpy/Streamlet.union")
def test_union_carries_both_streams():
    b = Builder()
    left, right = source(b, "left", [1, 2, 3]), source(b, "right", ["a", "b"])
    left.union(right).set_name("both").log()
    run = InProcess(b)
    run.run()
    assert Counter(run.out("both", "log-1")) == Counter([1, 2, 3, "a", "b"])


@pytest.mark.compat("heronpy/Streamlet.clone")
def test_clone_gives_each_clone_every_element():
    b = Builder()
    first, second = source(b, "numbers", [1, 2, 3]).clone(2)
    first.set_name("first").log()
    second.set_name("second").log()
    run = InProcess(b)
    run.run()
    assert run.out("first", "log-1") == [1, 2, 3]
    assert run.out("second", "log-2") == [1, 2, 3]


@pytest.mark.compat("heronpy/Streamlet.repartition")
def test_repartition_routes_by_the_function_and_round_robin_without_one():
    b = Builder()
    numbers = source(b, "numbers", [1, 2, 3, 4, 5])
    numbers.repartition(2, lambda x, n: 0 if x < 3 else [0, 1]).set_name("routed").log()
    numbers.repartition(2).set_name("spread").log()
    run = InProcess(b)
    run.run()
    first, second = run.component_tasks["routed"]
    assert [t.values[0] for t in run.inputs[first]] == [1, 2, 3, 4, 5]
    assert [t.values[0] for t in run.inputs[second]] == [3, 4, 5]
    first, second = run.component_tasks["spread"]
    assert [t.values[0] for t in run.inputs[first]] == [1, 3, 5]
    assert [t.values[0] for t in run.inputs[second]] == [2, 4]
    with pytest.raises(RuntimeError, match="2 arguments"):
        numbers.repartition(2, lambda x: 0)


class Twice(TransformOperator):
    """Emits each element and its negation, and counts them in the operator's state."""

    def setup(self, context):
        self.context = context
        self.count = 0

    def transform(self, tup):
        self.count += 1
        self.context.emit(tup.values[0])
        self.context.emit(-tup.values[0])


@pytest.mark.compat("heronpy/Streamlet.transform")
def test_transform_emits_through_its_context():
    b = Builder()
    source(b, "numbers", [1, 2]).transform(Twice()).set_name("twice").log()
    run = InProcess(b)
    run.run()
    assert run.out("twice", "log-1") == [1, -1, 2, -2]
    assert run.user("twice")._transform_operator.count == 2


# -- the ends of a topology -----------------------------------------------------------


@pytest.mark.compat("heronpy/Streamlet.consume")
def test_consume_calls_the_function_for_each_element():
    b = Builder()
    source(b, "words", ["a", "b", "c"]).consume(seen)
    run = InProcess(b)
    run.run()
    assert SEEN == ["a", "b", "c"]


@pytest.mark.compat("heronpy/Streamlet.log")
def test_log_logs_each_element(caplog):
    b = Builder()
    source(b, "words", ["alpha", "beta"]).log()
    with caplog.at_level(logging.INFO):
        run = InProcess(b)
        run.run()
    logged = [r.getMessage() for r in caplog.records if r.name.endswith(".log-1")]
    assert logged[-2:] == ["alpha", "beta"]


def test_to_sink_sets_up_the_sink_then_puts_each_element():
    b = Builder()
    source(b, "words", ["a", "b"]).to_sink(Collect())
    run = InProcess(b)
    run.run()
    assert SEEN == [("setup", run.component_tasks["sink-1"][0]), "a", "b"]


# -- windows ------------------------------------------------------------------------------


def keyed(outputs):
    """(key, result) of each (KeyedWindow, result) a window emitted."""
    return [(kw._key, result) for kw, result in outputs]


@pytest.mark.compat("heronpy/Streamlet.reduce_by_key_and_window")
def test_reduce_by_key_and_window_reduces_each_tumbling_window_once():
    b = Builder()
    pairs = source(b, "pairs", [("a", 1), ("b", 2), ("a", 3)])
    pairs.reduce_by_key_and_window(tumbling(2), lambda x, y: x + y).set_name("sums").log()
    run = InProcess(b)
    run.run()
    assert run.out("sums", "log-1") == []  # nothing before the window ends
    run.tick("sums")
    assert keyed(run.out("sums", "log-1")) == [("a", 4), ("b", 2)]
    run.tick("sums")  # an empty window: no key, nothing emitted
    assert keyed(run.out("sums", "log-1")) == [("a", 4), ("b", 2)]
    first = run.out("sums", "log-1")[0][0]._window
    assert first._end_time - first._start_time == 2
    bolt = run.hosted[run.component_tasks["sums"][0]]
    assert bolt.config["topology.tick.tuple.freq.secs"] == 2  # asked for in initialize
    run.user("pairs")._generator.left = iter([("b", 7)])
    run.run()
    run.tick("sums")
    (window, total), = run.out("sums", "log-1")[2:]
    assert (window._key, total) == ("b", 7)
    # It began when the empty window before it ended, moments ago: windows are back to
    # back, by the clock rather than in whole seconds.
    third = window._window
    assert first._end_time < third._start_time < third._end_time < third._start_time + 1


def test_keyed_windows_keep_each_key_on_one_task():
    b = Builder()
    pairs = source(b, "pairs", [(k, n) for n in range(1, 4) for k in "abcdef"])
    pairs.reduce_by_key_and_window(tumbling(), lambda x, y: x + y).set_name(
        "sums").set_num_partitions(2).log()
    run = InProcess(b)
    run.run()
    run.tick("sums")
    assert sorted(keyed(run.out("sums", "log-1"))) == [(k, 6) for k in "abcdef"]
    assert all(run.inputs[t] for t in run.component_tasks["sums"])  # both tasks had keys


ROUTE = """
from heronbridge.shims.heronpy import imports
imports.install()
from heronpy.streamlet.impl.reducebykeyandwindowbolt import ReduceGrouping
g = ReduceGrouping()
g.prepare(None, "c", "output", list(range(7)))
print([g.choose_tasks([(f"key{i}", 1)])[0] for i in range(40)])
"""


def test_keyed_windows_route_a_key_alike_in_every_process():
    """Python's hash of a str differs between processes: two tasks emitting the same
    key must still pick the same task."""
    routes = {subprocess.run([sys.executable, "-c", ROUTE], capture_output=True, text=True,
                             check=True,
                             env={**os.environ, "PYTHONHASHSEED": seed}).stdout
              for seed in ("1", "2")}
    assert len(routes) == 1


def test_reduce_by_key_and_window_keeps_the_order_of_a_left_fold():
    b = Builder()
    pairs = source(b, "pairs", [("k", "x"), ("k", "y"), ("k", "z")])
    pairs.reduce_by_key_and_window(tumbling(), lambda acc, v: f"({acc}+{v})").set_name(
        "folded").log()
    run = InProcess(b)
    run.run()
    run.tick("folded")
    assert keyed(run.out("folded", "log-1")) == [("k", "((x+y)+z)")]


def test_reduce_by_key_and_window_over_a_sliding_window(monkeypatch):
    now = [0.0]
    monkeypatch.setattr(windows.Sliding, "clock", staticmethod(lambda: now[0]))
    b = Builder()
    pairs = source(b, "pairs", [("a", 1)])
    sliding = WindowConfig.create_sliding_window(2, 1)  # 2 s windows every second
    pairs.reduce_by_key_and_window(sliding, lambda x, y: x + y).set_name("sums").log()
    run = InProcess(b)
    now[0] = 0.5
    run.run()  # ("a", 1) arrives at 0.5
    now[0] = 1.0
    run.tick("sums")  # window (-1, 1]: ("a", 1)
    run.hosted[run.component_tasks["pairs"][0]].user._generator.left = iter([("a", 2)])
    now[0] = 1.5
    run.run()  # ("a", 2) arrives at 1.5
    for at in (2.0, 3.0, 4.0):  # windows (0, 2], (1, 3], (2, 4]
        now[0] = at
        run.tick("sums")
    assert keyed(run.out("sums", "log-1")) == [("a", 1), ("a", 3), ("a", 2)]


@pytest.mark.compat("heronpy/Streamlet.reduce_by_window")
def test_reduce_by_window_folds_from_none_each_window():
    b = Builder()
    source(b, "numbers", [1, 2, 3]).reduce_by_window(
        tumbling(), lambda acc, v: (acc or 0) + v).set_name("total").log()
    run = InProcess(b)
    run.run()
    run.tick("total")
    run.tick("total")
    assert [result for _, result in run.out("total", "log-1")] == [6, None]


@pytest.mark.parametrize(("join", "expected"), [
    pytest.param(join, expected, marks=pytest.mark.compat(f"heronpy/Streamlet.{join}"))
    for join, expected in [
        ("join", [("a", (1, "x")), ("a", (3, "x"))]),
        ("outer_left_join", [("a", (1, "x")), ("a", (3, "x")), ("b", (2, None))]),
        ("outer_right_join", [("a", (1, "x")), ("a", (3, "x")), ("c", (None, "y"))]),
        ("outer_join", [("a", (1, "x")), ("a", (3, "x")), ("b", (2, None)), ("c", (None, "y"))]),
    ]])
def test_each_join_type_over_a_window(join, expected):
    b = Builder()
    left = source(b, "left", [("a", 1), ("b", 2), ("a", 3)])
    right = source(b, "right", [("a", "x"), ("c", "y")])
    getattr(left, join)(right, tumbling(), lambda lv, rv: (lv, rv)).set_name("joined").log()
    run = InProcess(b)
    run.run()
    run.tick("joined")
    assert sorted(keyed(run.out("joined", "log-1")), key=repr) == sorted(expected, key=repr)
    run.tick("joined")  # the window is over: nothing is joined again
    assert len(run.out("joined", "log-1")) == len(expected)


# -- at-least-once ----------------------------------------------------------------------


def test_a_window_acks_its_tuples_once_it_has_emitted():
    b = Builder()
    source(b, "pairs", [("a", 1), ("a", 2)]).reduce_by_key_and_window(
        tumbling(), lambda x, y: x + y).set_name("sums").log()
    config = Config()
    config.set_delivery_semantics(Config.ATLEAST_ONCE)
    run = InProcess(b, config._api_config)
    bolt = run.hosted[run.component_tasks["sums"][0]]
    for n, value in enumerate([1, 2], 1):
        bolt.receive("pairs", [("a", value)], "output", root=n, edge=n)
    assert bolt.settled()["ack"] == []
    bolt.host.execute(tick_tuple(1))
    assert sorted(bolt.settled()["ack"]) == [1, 1, 2, 2]  # (root, xor) of each input


# -- heronpy's window bolts used directly --------------------------------------------


class Windows(TumblingWindowBolt):
    outputs = ["size"]
    windows: list = []

    def processWindow(self, window_info, tuples):
        Windows.windows.append([t.values[0] for t in tuples])


def test_a_tumbling_window_bolt_gets_ticks_and_each_tuple_in_one_window():
    def build(b):
        numbers = b.add_spout("numbers", NumberSpout, 1)
        b.add_bolt("windows", Windows, 1, inputs=[numbers],
                   config={TumblingWindowBolt.WINDOW_DURATION_SECS: 3})

    Windows.windows = []
    plan = build_plan("windowed", build)
    bolt = Hosted(plan, "windows")
    assert bolt.config["topology.tick.tuple.freq.secs"] == 3
    for n in (1, 2):
        bolt.receive("numbers", [n, "k"])
    bolt.host.execute(tick_tuple(1))
    bolt.receive("numbers", [3, "k"])
    bolt.host.execute(tick_tuple(1))
    bolt.host.execute(tick_tuple(1))
    assert Windows.windows == [[1, 2], [3], []]


@pytest.mark.compat("heronpy/Streamlet.set_name", "heronpy/Streamlet.get_name",
                    "heronpy/Streamlet.set_num_partitions", "heronpy/Streamlet.get_num_partitions")
def test_a_streamlets_name_and_partitions_become_its_components_name_and_tasks():
    b = Builder()
    doubled = source(b, "numbers", [1, 2, 3, 4]).map(lambda x: 2 * x)
    assert doubled.set_name("doubled") is doubled and doubled.get_name() == "doubled"
    assert doubled.set_num_partitions(3) is doubled and doubled.get_num_partitions() == 3
    doubled.log()
    run = InProcess(b)
    run.run()
    tasks = run.component_tasks["doubled"]
    assert len(tasks) == 3
    assert sorted(t.values[0] for task in tasks for t in run.inputs[task]) == [1, 2, 3, 4]
