"""heronpy's stateful API on the runtime's stateful contract, without processes: the
loader's EFFECTIVELY_ONCE, `init_state` before `initialize` with a HashMapState over the
runtime's own dict, `pre_save` with and without the checkpoint id, and rollbacks played
in the test process (each task's dict pickled at a checkpoint, every task rebuilt from
it): open windows come back and emit what they would have, and the stateful word count
example counts every word exactly once."""

from __future__ import annotations

import pickle
from collections import Counter, defaultdict
from pathlib import Path
from unittest import mock

import heronpy_kit
import pytest
from heronpy.api.bolt.bolt import Bolt
from heronpy.api.bolt.window_bolt import TumblingWindowBolt
from heronpy.api.spout.spout import Spout
from heronpy.api.state.state import HashMapState
from heronpy.api.state.stateful_component import StatefulComponent
from heronpy.streamlet.builder import Builder
from heronpy.streamlet.config import Config
from heronpy.streamlet.windowconfig import WindowConfig
from heronpy_kit import Hosted, build_plan
from streamlet_kit import InProcess
from test_streamlet_operators import keyed, source, tumbling

from heronbridge.compat.heronpy.loader import heron_options, load_file
from heronbridge.runtime import config as rt
from heronbridge.runtime.api.tuple import tick_tuple
from heronbridge.runtime.instance.emitter import stream_table
from heronbridge.runtime.plan.tasks import TaskLayout
from heronbridge.runtime.wire.serde import make_serializer
from heronbridge.shims.heronpy import HeronpyError, windows
from heronbridge.shims.heronpy.host import HeronpyBolt
from heronbridge.shims.heronpy.state import (
    WINDOW,
    RuntimeState,
    StatefulHeronpyBolt,
    StatefulHeronpySpout,
)
from heronbridge.shims.storm.state import StatefulMixin

EFFECTIVELY_ONCE = {"topology.reliability.mode": "EFFECTIVELY_ONCE"}
EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "heronpy"
CALLS: list = []  # what the components below were called with, in order


@pytest.fixture(autouse=True)
def _clear_calls():
    CALLS.clear()


class OffsetSpout(Spout, StatefulComponent):
    outputs = ["n"]

    def init_state(self, stateful_state):
        CALLS.append(("init_state", stateful_state))
        self.state = stateful_state

    def initialize(self, config, context):
        CALLS.append(("initialize", self.state))

    def pre_save(self, checkpoint_id):
        CALLS.append(("pre_save", checkpoint_id))

    def next_tuple(self):
        n = self.state.get("next") or 0
        self.emit([n])
        self.state.put("next", n + 1)


class HeronpySignatureBolt(Bolt, StatefulComponent):
    """pre_save as heronpy's abstract method declares it: no checkpoint id."""

    outputs = ["n"]

    def init_state(self, stateful_state):
        self.state = stateful_state

    def pre_save(self):
        CALLS.append(("pre_save",))
        self.state.put("saves", (self.state.get("saves") or 0) + 1)

    def process(self, tup):
        self.state.put(tup.values[0], "seen")


class PlainBolt(Bolt):
    outputs = ["n"]

    def process(self, tup):
        CALLS.append(("process", tup.values[0]))


class MigratedMixinBolt(StatefulMixin, Bolt):
    """A streamparse bolt with the state mixin, as `heronbridge migrate` leaves it."""

    outputs = ["n"]

    def initialize(self, config, context):
        CALLS.append(("initialize", dict(self.state)))

    def process(self, tup):
        self.state[tup.values[0]] = self.state.get(tup.values[0], 0) + 1

    def pre_save(self, checkpoint_id):
        self.state["saved at"] = checkpoint_id


def topology(b):
    numbers = b.add_spout("numbers", OffsetSpout, 1)
    b.add_bolt("signature", HeronpySignatureBolt, 1, inputs=[numbers])
    b.add_bolt("plain", PlainBolt, 1, inputs=[numbers])


def migrated_topology(b):
    numbers = b.add_spout("numbers", OffsetSpout, 1)
    b.add_bolt("migrated", MigratedMixinBolt, 1, inputs=[numbers])


def restored_hosts(states: dict[int, dict]):
    """The stateful hosts as the runtime starts them: `init_state(states[task])` (a new
    dict for a task without one) right before `open`/`prepare`."""

    def restored(base):
        class Restored(base):
            def _start(self, config, context, collector):
                self.init_state(states.setdefault(context.task_id, {}))
                super()._start(config, context, collector)

        return Restored

    return mock.patch.multiple(heronpy_kit, HeronpySpout=restored(StatefulHeronpySpout),
                               HeronpyBolt=restored(StatefulHeronpyBolt))


def hosted(plan, component, state):
    task = TaskLayout.of(plan).component_tasks[component][0]
    with restored_hosts({task: state}):
        return Hosted(plan, component)


# -- the loader and the hosts -----------------------------------------------------------------


def test_effectively_once_is_passed_through_and_every_component_hosted_statefully():
    plan = build_plan("stateful", topology, EFFECTIVELY_ONCE)
    assert plan.config["topology.reliability.mode"] == "EFFECTIVELY_ONCE"
    assert {c.class_path.rsplit(":", 1)[1] for c in plan.components.values()} == {
        "StatefulHeronpySpout", "StatefulHeronpyBolt"}
    plain = build_plan("plain", topology, {"topology.reliability.mode": "ATLEAST_ONCE"})
    assert {c.class_path.rsplit(":", 1)[1] for c in plain.components.values()} == {
        "HeronpySpout", "HeronpyBolt"}
    assert not hasattr(HeronpyBolt, "init_state")  # other modes: nothing to checkpoint
    with pytest.raises(HeronpyError, match=r"topology 'odd'.*received 'EXACTLY_ONCE'"):
        build_plan("odd", topology, {"topology.reliability.mode": "EXACTLY_ONCE"})


def test_init_state_comes_before_initialize_with_a_hashmapstate_over_the_runtime_dict():
    runtime_dict = {"next": 5}
    spout = hosted(build_plan("stateful", topology, EFFECTIVELY_ONCE), "numbers",
                   runtime_dict)
    (first, given), (second, seen) = CALLS
    assert (first, second) == ("init_state", "initialize") and seen is given
    assert isinstance(given, HashMapState) and given._dict is runtime_dict
    spout.host.next_tuple()
    spout.host.next_tuple()
    assert sorted(record[0][0] for _, record in spout.sent()) == [5, 5, 6, 6]  # 2 bolts
    assert runtime_dict == {"next": 7}  # what the runtime pickles is what the spout put


def test_pre_save_is_called_with_the_checkpoint_id_or_without_as_declared():
    plan = build_plan("stateful", topology, EFFECTIVELY_ONCE)
    spout = hosted(plan, "numbers", {})
    spout.host.pre_save("1700000000-1")
    assert CALLS[-1] == ("pre_save", "1700000000-1")  # as Heron's instance calls it
    state: dict = {}
    bolt = hosted(plan, "signature", state)
    bolt.receive("numbers", [3])
    bolt.host.pre_save("1700000000-2")
    bolt.host.pre_save("1700000000-3")
    assert CALLS[-2:] == [("pre_save",), ("pre_save",)]
    assert state == {3: "seen", "saves": 2}


def test_a_migrated_streamparse_component_keeps_its_mixin_state_in_the_runtime_dict():
    state = {4: 2}
    bolt = hosted(build_plan("migrated", migrated_topology, EFFECTIVELY_ONCE), "migrated",
                  state)
    assert CALLS == [("initialize", {4: 2})]  # restored before initialize
    bolt.receive("numbers", [4])
    bolt.host.pre_save("1700000000-9")
    assert state == {4: 3, "saved at": "1700000000-9"}  # what the runtime pickles


def test_a_component_that_is_not_stateful_saves_nothing_and_keeps_the_direct_path():
    state: dict = {}
    bolt = hosted(build_plan("stateful", topology, EFFECTIVELY_ONCE), "plain", state)
    bolt.receive("numbers", [1])
    bolt.host.pre_save("1700000000-1")
    assert CALLS == [("process", 1)] and state == {}
    # the per-tuple path is bound once, as in every other mode: no stateful step in it
    assert "execute" in vars(bolt.host)
    assert type(bolt.host).execute is HeronpyBolt.execute


def test_heronpy_s_own_window_bolts_read_their_state_as_a_mapping():
    state = RuntimeState({"tuples": [1]})
    assert "tuples" in state and state["tuples"] == [1] and list(state) == ["tuples"]
    state["more"] = 2
    assert state.get("more") == 2 and len(state) == 2 and list(state.enumerate()) == [
        (0, "tuples"), (1, "more")]


# -- rollbacks in the test process ---------------------------------------------------------


class Rollbacks(InProcess):
    """Every task of `plan` hosted as the runtime hosts it under EFFECTIVELY_ONCE, each
    given its dict (`states`, by task: a checkpoint's, else a new one)."""

    def __init__(self, plan, states=None):  # InProcess, over a plan and its states
        self.states = dict(states or {})
        layout = TaskLayout.of(plan)
        with restored_hosts(self.states):
            self.hosted = {task: Hosted(plan, component, i)
                           for component, tasks in layout.component_tasks.items()
                           if component in plan.components
                           for i, task in enumerate(tasks)}
        self.plan = plan
        self.component_tasks = layout.component_tasks
        self.task_component = layout.task_component
        self.streams = stream_table(plan)
        self.serializer = make_serializer(plan.config[rt.SERIALIZER])
        self.delivered = defaultdict(list)
        self.inputs = defaultdict(list)

    def checkpoint(self, checkpoint_id: str = "1700000000-1") -> dict[int, bytes]:
        """What the runtime does at a checkpoint: each task's pre_save, then its dict
        pickled."""
        saved = {}
        for task, one in self.hosted.items():
            one.host.pre_save(checkpoint_id)
            saved[task] = pickle.dumps(one.host.state)
        return saved

    def rollback(self, saved: dict[int, bytes]) -> Rollbacks:
        """Every task rebuilt: new instances, each given its checkpointed dict."""
        return Rollbacks(self.plan, {task: pickle.loads(blob) for task, blob in saved.items()})


def effectively_once_plan(builder: Builder, name: str = "windows"):
    config = Config()
    config.set_delivery_semantics(Config.EFFECTIVELY_ONCE)
    return build_plan(name, builder.build, config._api_config)


def keyed_sums(b):
    source(b, "pairs", [("a", 1), ("b", 2), ("a", 3)]).reduce_by_key_and_window(
        tumbling(), lambda x, y: x + y).set_name("window").log()


def total(b):
    source(b, "numbers", [1, 2, 3]).reduce_by_window(
        tumbling(), lambda acc, v: (acc or 0) + v).set_name("window").log()


def outer_join(b):
    left = source(b, "left", [("a", 1), ("b", 2), ("a", 3)])
    right = source(b, "right", [("a", "x"), ("c", "y")])
    left.outer_join(right, tumbling(), lambda lv, rv: (lv, rv)).set_name("window").log()


def outputs(run):
    return sorted(((kw._key if hasattr(kw, "_key") else None, result)
                   for kw, result in run.out("window", "log-1")), key=repr)


@pytest.mark.parametrize("streamlets", [keyed_sums, total, outer_join])
def test_an_open_window_comes_back_from_a_checkpoint_and_emits_what_it_would_have(
        streamlets):
    b = Builder()
    streamlets(b)
    run = Rollbacks(effectively_once_plan(b))
    run.run()  # every element is in the open window
    saved = run.checkpoint()
    window_task = run.component_tasks["window"][0]
    assert WINDOW in pickle.loads(saved[window_task])
    restored = run.rollback(saved)  # new instances; the sources start again, unread
    for topology in (run, restored):
        topology.tick("window")  # the window open at the checkpoint
        topology.tick("window")  # an empty one
    expected = outputs(run)
    assert any(result is not None for _, result in expected)
    assert outputs(restored) == expected


def test_a_sliding_window_comes_back_with_the_ages_of_its_tuples(monkeypatch):
    """A window's arrival times are saved as ages: the clock they come back to is not
    the one they were read on, and the time between checkpoint and restore is no age."""
    now = [0.5]
    monkeypatch.setattr(windows.Sliding, "clock", staticmethod(lambda: now[0]))
    b = Builder()
    sliding = WindowConfig.create_sliding_window(2, 1)  # 2 s windows every second
    source(b, "pairs", [("a", 1)]).reduce_by_key_and_window(
        sliding, lambda x, y: x + y).set_name("window").log()
    run = Rollbacks(effectively_once_plan(b))
    run.run()  # ("a", 1) arrives at 0.5
    now[0] = 1.2
    saved = run.checkpoint()  # 0.7 s old
    now[0] = 50.0
    restored = run.rollback(saved)
    for topology, at in ((run, 1.2), (restored, 50.0)):
        for later in (0.8, 1.8):  # still in the window, then out of it
            now[0] = at + later
            topology.tick("window")
    assert keyed(run.out("window", "log-1")) == [("a", 1)]
    assert keyed(restored.out("window", "log-1")) == [("a", 1)]


class Windows(TumblingWindowBolt):
    outputs = ["n"]

    def processWindow(self, window_info, tuples):
        CALLS.append([(t.component, t.values[0]) for t in tuples])


def test_a_heronpy_window_bolt_s_tuples_survive_a_checkpoint_and_a_new_instance():
    def build(b):
        numbers = b.add_spout("numbers", OffsetSpout, 1)
        b.add_bolt("windows", Windows, 1, inputs=[numbers],
                   config={TumblingWindowBolt.WINDOW_DURATION_SECS: 3})

    plan = build_plan("windowed", build, EFFECTIVELY_ONCE)
    state: dict = {}
    bolt = hosted(plan, "windows", state)
    for n in (1, 2):
        bolt.receive("numbers", [n])
    bolt.host.pre_save("1700000000-1")
    saved = pickle.dumps(state)
    bolt.host.execute(tick_tuple(1))
    again = hosted(plan, "windows", pickle.loads(saved))
    assert again.host is not bolt.host and again.user.saved_state._dict is again.host.state
    again.host.execute(tick_tuple(1))
    again.host.execute(tick_tuple(1))
    assert CALLS[-3:] == [[("numbers", 1), ("numbers", 2)]] * 2 + [[]]


def counted(topology) -> Counter:
    counts: Counter = Counter()
    for task in topology.component_tasks["count"]:
        counts.update(topology.hosted[task].host.state)  # the dict the runtime pickles
    return counts


def test_the_stateful_word_count_counts_every_word_once_through_a_rollback(monkeypatch, tmp_path):
    monkeypatch.syspath_prepend(str(EXAMPLES))
    plan = load_file(EXAMPLES / "stateful_wordcount.py",
                     options={"wordcount.lines": 400, "wordcount.rate": 1e9})
    with heron_options(str(tmp_path)):  # the module defines a Topology: heronpy needs it
        from stateful_wordcount import expected_counts

    def feed(topology, lines):
        spout = topology.hosted[topology.component_tasks["lines"][0]].host
        for _ in range(lines):
            spout.next_tuple()
        topology.carry()

    run = Rollbacks(plan)
    feed(run, 150)
    saved = run.checkpoint()
    feed(run, 100)  # counted, then lost with the crash
    assert counted(run) == expected_counts(250)
    restored = run.rollback(saved)  # the spout rewinds to line 150, the counts with it
    assert counted(restored) == expected_counts(150)
    restored.run()
    assert counted(restored) == expected_counts(400)
    assert all(restored.inputs[t] for t in restored.component_tasks["count"])  # both tasks
