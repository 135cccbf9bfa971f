"""heronpy spouts and bolts hosted through their delegate, on the runtime's collectors."""

from __future__ import annotations

import logging
import time

import pytest
from heronpy_kit import Hosted, build_plan
from hp_components import CountingHook, JudgeBolt, ModGrouping, NumberSpout, RecordBolt

from heronbridge.runtime.api.tuple import tick_tuple
from heronbridge.runtime.errors import ComponentError
from heronbridge.shims.heronpy import HeronpyError
from heronbridge.shims.heronpy.context import HeronpyContext, StreamId
from heronbridge.shims.heronpy.tuples import HeronTuple, TickTuple


def judged(mode="ATLEAST_ONCE", **config):
    def build(b):
        from heronpy.api.stream import Grouping

        numbers = b.add_spout("numbers", NumberSpout, 1)
        judge = b.add_bolt("judge", JudgeBolt, 2, inputs={numbers: Grouping.fields("key")})
        b.add_bolt("record", RecordBolt, 2, inputs={judge: Grouping.custom(ModGrouping())},
                   config={"topology.tick.tuple.freq.secs": 2})

    return build_plan("judged", build, {"topology.reliability.mode": mode,
                                        "test.list": [1, (2, 3)], **config})


def test_initialize_gets_heron_s_config_and_context_by_keyword():
    bolt = Hosted(judged(), "record")
    config, context = bolt.user.config, bolt.user.context
    assert isinstance(context, HeronpyContext)
    assert config["test.list"] == [1, (2, 3)]  # pickled by heronpy, unpickled for it
    assert config["topology.tick.tuple.freq.secs"] == 2
    assert config["topology.reliability.mode"] == "ATLEAST_ONCE"
    assert not any(k.startswith("heronbridge.") for k in config)
    assert context.get_cluster_config() is config
    assert (context.get_topology_name(), context.get_component_id(),
            context.get_task_id()) == ("judged", "record", bolt.task)
    assert context.get_component_tasks("judge") == [2, 3]
    assert context.get_component_tasks("nobody") is None
    assert context.get_this_sources() == {StreamId("default", "judge"): 7}
    assert context.get_sources("judge") == {StreamId("default", "numbers"): 2}
    assert context.get_sources("numbers") is None


def test_a_bolt_gets_heron_tuples_and_its_acks_and_anchors_reach_the_tuple_tree():
    bolt = Hosted(judged(), "judge")
    before = time.time()
    rt_tuple = bolt.receive("numbers", [3, "k3"], root=77, edge=0b1010)
    (dest, record), = bolt.sent()
    assert dest in (5, 6) and record[0] == [3] and record[1] == 77  # anchored: same root
    assert bolt.settled()["ack"] == [77, 0b1010 ^ record[2]]  # input edge ^ emitted edge
    assert rt_tuple._root == 0
    # What process() got:
    seen = []
    bolt.user.process = seen.append
    bolt.host._bind_fast()
    bolt.receive("numbers", [4, "k4"])
    bolt.receive("numbers", [5, "k0"])
    first, second = seen
    assert isinstance(first, HeronTuple) and first.values == [4, "k4"]
    assert (first.component, first.stream, first.task) == ("numbers", "default", 4)
    assert before <= first.creation_time <= time.time()
    assert first.id != second.id and isinstance(first.id, str)
    assert first.roots.values == [4, "k4"]
    bolt.host.execute(bolt.runtime_tuple("numbers", (6, "k1")))  # pickled as a tuple
    assert seen[-1].values == [6, "k1"]
    assert "HeronTuple(id=" in repr(first) and "values=[4, 'k4']" in repr(first)


def test_explicit_fails_fail_the_root():
    bolt = Hosted(judged(**{"test.fail.every": 3}), "judge")
    bolt.receive("numbers", [3, "k3"], root=5, edge=1)
    bolt.receive("numbers", [4, "k4"], root=6, edge=2)
    settled = bolt.settled()
    assert settled["fail"] == [5] and settled["ack"][0] == 6
    assert (bolt.emitter.acked, bolt.emitter.failed) == (1, 1)


def test_at_most_once_a_spout_is_acked_at_once_for_every_emit_with_an_id():
    spout = Hosted(judged("ATMOST_ONCE"), "numbers")
    for _ in range(3):
        spout.host.next_tuple()
    # The runner calls ack(id) for these right after the burst, as Heron's instance does.
    assert spout.emitter.ack_now == [0, 1, 2] and not spout.emitter.pending
    assert spout.settled()["init"] == []
    for msg_id in spout.emitter.ack_now:
        spout.host.ack(msg_id)
    assert [e["n"] for e in spout.user.record.events if e["event"] == "ack"] == [0, 1, 2]


def test_at_least_once_a_spout_s_emits_are_tracked_and_its_callbacks_are_its_own():
    spout = Hosted(judged(), "numbers")
    spout.host.next_tuple()
    assert [msg_id for msg_id, _ in spout.emitter.pending.values()] == [0]
    assert len(spout.settled()["init"]) == 2
    assert spout.host.ack == spout.user.ack and spout.host.next_tuple == spout.user.next_tuple
    spout.host.fail(0)
    spout.host.activate()
    spout.host.deactivate()
    assert [e["event"] for e in spout.user.record.events] == ["fail", "activate", "deactivate"]


def test_closing_an_active_spout_deactivates_it_first_as_storm_does_on_kill():
    spout = Hosted(judged(), "numbers")
    spout.host.activate()
    closed = []
    spout.user.close = lambda: closed.append(True)
    spout.host.close()
    assert [e["event"] for e in spout.user.record.events] == ["activate", "deactivate"]
    assert closed == [True]


def test_ticks_come_to_process_tick_as_heron_makes_them_and_are_never_acked():
    bolt = Hosted(judged(), "record")
    bolt.host.execute(tick_tuple(2))
    assert bolt.user.record.events == [{"event": "tick", "stream": "__tick",
                                        "source": "__system", "task": bolt.task}]
    got = []
    bolt.user.process_tick = got.append
    bolt.host._bind_fast()
    bolt.host.execute(tick_tuple(2))
    (tick,) = got
    assert isinstance(tick, TickTuple) and (tick.id, tick.values, tick.task) == \
        ("__tick", None, None)
    bolt.user.ack(tick)
    bolt.user.fail(tick)
    assert bolt.settled() == {"ack": [], "fail": [], "init": []}
    assert bolt.emitter.acked == 0


def test_a_custom_grouping_picks_the_target_task():
    bolt = Hosted(judged(), "judge")
    for n in range(4):
        bolt.receive("numbers", [n, f"k{n}"])
    record_tasks = bolt.context.component_tasks("record")
    sent = sorted((record[0][0], dest) for dest, record in bolt.sent() if dest in record_tasks)
    assert sent == [(n, record_tasks[n % 2]) for n in range(4)]


def test_a_custom_grouping_named_by_class_path_is_built_in_the_task():
    def build(b):
        from heronpy.api.stream import Grouping

        numbers = b.add_spout("numbers", NumberSpout, 1)
        b.add_bolt("record", RecordBolt, 2,
                   inputs={numbers: Grouping.custom("hp_components.ModGrouping")})

    spout = Hosted(build_plan("by-path", build), "numbers")
    for _ in range(4):
        spout.host.next_tuple()
    sent = sorted((record[0][0], dest) for dest, record in spout.sent())
    assert sent == [(0, 2), (1, 3), (2, 2), (3, 3)]


def test_need_task_ids_returns_the_target_tasks():
    spout = Hosted(judged(), "numbers")
    tasks = spout.user.emit([1, "k1"], tup_id=1, need_task_ids=True)
    assert tasks == [3] and spout.user.emit([2, "k2"]) is None
    bolt = Hosted(judged(), "judge")
    assert bolt.user.emit([7], need_task_ids=True) == [6]


@pytest.mark.parametrize(("call", "expected"), [
    (lambda u, t: u.emit("not a list"), r"emit on stream 'default' expects a list of values, "
                                        r"received str 'not a list'"),
    (lambda u, t: u.emit([1], stream="nope"), r"emit on undeclared stream 'nope'; declared "
                                              r"streams are \['default'\]"),
    (lambda u, t: u.emit([1, 2]), r"emit on stream 'default' expects 1 values for fields "
                                  r"\['n'\], received 2"),
    (lambda u, t: u.ack("7"), r"ack expects a tuple the bolt received \(a HeronTuple\), "
                              r"received str '7'"),
    (lambda u, t: u.fail(None), r"fail expects a tuple the bolt received"),
    (lambda u, t: u.emit([1], anchors=["7"]), r"emit expects anchors to be a list of tuples "
                                              r"the bolt received \(HeronTuples\), received"),
])
def test_bad_input_is_refused_naming_topology_component_and_task(call, expected):
    bolt = Hosted(judged(), "judge")
    tup = HeronTuple(bolt.runtime_tuple("numbers", [1, "k1"]), [1, "k1"], 0.0)
    with pytest.raises((HeronpyError, ComponentError),
                       match=rf"topology 'judged', component 'judge', task {bolt.task}: "
                             rf"{expected}"):
        call(bolt.user, tup)


def test_the_delegate_s_forwarders_replace_heronpy_s_only_where_not_overridden():
    bolt = Hosted(judged(), "judge")
    assert bolt.user.emit is bolt.host.emit and bolt.user.ack is bolt.host.ack
    from heronbridge.shims.heronpy.extras import ReliableSpout

    class Overriding(NumberSpout, ReliableSpout):
        pass

    plan = judged()
    plan.components["numbers"].config["heronbridge.heronpy.class"] = \
        f"{__name__}.Overriding"
    globals()["Overriding"] = Overriding
    spout = Hosted(plan, "numbers")
    assert "emit" not in vars(spout.user)  # its own emit (ReliableSpout's) stays
    spout.host.next_tuple()
    assert spout.user.unacked_tuples == {0: ([0, "k0"], "default", None, False)}


def test_task_hooks_see_what_heron_s_instance_shows_them():
    hook = CountingHook()
    plan = judged()
    bolt_class = type("HookedJudge", (JudgeBolt,), {
        "initialize": lambda self, config, context: (
            JudgeBolt.initialize(self, config, context), context.add_task_hook(hook))})
    globals()["HookedJudge"] = bolt_class
    plan.components["judge"].config["heronbridge.heronpy.class"] = f"{__name__}.HookedJudge"
    bolt = Hosted(plan, "judge")
    assert bolt.host.hooked and "execute" not in vars(bolt.host)
    bolt.receive("numbers", [3, "k3"], root=5, edge=1)
    assert hook.last.executing_task_id == bolt.task and hook.last.execute_latency_ms >= 0
    bolt.host.cleanup()
    assert hook.calls == {"prepare": 1, "emit": 1, "bolt_ack": 1, "bolt_execute": 1,
                          "clean_up": 1}
    assert bolt.settled()["ack"][0] == 5  # the slow path acks like the fast one
    with pytest.raises(HeronpyError, match=r"add_task_hook expects an ITaskHook, received "
                                           r"str 'x'"):
        bolt.host.heron_context.add_task_hook("x")


def test_auto_task_hooks_and_spout_callbacks(monkeypatch):
    plan = judged(**{"topology.auto.task.hooks": ["hp_components.CountingHook"]})
    spout = Hosted(plan, "numbers")
    hook = spout.host.heron_context.task_hooks[0]
    spout.host.next_tuple()
    spout.host.ack(0)
    spout.host.fail(0)
    assert hook.calls == {"prepare": 1, "emit": 1, "spout_ack": 1, "spout_fail": 1}
    assert hook.last.spout_task_id == spout.task


def test_register_metric_keeps_metrics_and_refuses_non_metrics():
    from heronpy.api.metrics import CountMetric

    bolt = Hosted(judged(), "judge")
    metric = CountMetric()
    bolt.host.heron_context.register_metric("seen", metric, 10)
    assert bolt.host.heron_context.metrics == {"seen": (metric, 10)}
    with pytest.raises(HeronpyError, match=r"register_metric\('bad'\) expects an IMetric"):
        bolt.host.heron_context.register_metric("bad", object(), 10)


def test_log_goes_to_the_component_s_logger_at_heron_s_levels(caplog):
    bolt = Hosted(judged(), "judge")
    with caplog.at_level(logging.DEBUG, logger="heronbridge.heronpy.judge"):
        bolt.user.log("careful", "warn")
        bolt.user.log("fine")
        bolt.user.logger.error("broken")
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == \
        [("WARNING", "careful"), ("INFO", "fine"), ("ERROR", "broken")]


def test_a_class_that_is_not_a_heronpy_component_is_refused():
    plan = judged()
    plan.components["judge"].config["heronbridge.heronpy.class"] = "hp_components.NumberSpout"
    with pytest.raises(HeronpyError, match=r"component 'judge', task 2: expected a heronpy "
                                           r"Bolt subclass, received 'hp_components."
                                           r"NumberSpout'"):
        Hosted(plan, "judge")
    plan.components["judge"].config["heronbridge.heronpy.class"] = "hp_components.Nope"
    with pytest.raises(HeronpyError, match=r"cannot load the heronpy class "
                                           r"'hp_components.Nope': AttributeError"):
        Hosted(plan, "judge")
