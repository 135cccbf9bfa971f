"""Each grouping's routing property, on the emitter that a task really uses."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from rt_components import KeySpout, RecordingBolt

from heronbridge.runtime import ComponentError, Grouping, Stream, TopologyBuilder
from heronbridge.runtime.grouping.javahash import fields_index
from heronbridge.runtime.instance.emitter import SpoutEmitter
from heronbridge.runtime.plan import TaskLayout
from heronbridge.runtime.wire.serde import make_serializer

PAR = 4


def emitter(grouping: Grouping, local: frozenset[int] = frozenset(), outputs=None,
            acking: bool = False) -> tuple[SpoutEmitter, tuple[int, ...]]:
    b = TopologyBuilder("routing")
    b.spout("src", KeySpout, outputs=outputs)
    stream = "src:to" if outputs else "src"
    b.bolt("sink", RecordingBolt, inputs={stream: grouping}, par=PAR)
    plan = b.build()
    tasks = TaskLayout.of(plan).component_tasks["sink"]
    em = SpoutEmitter(plan, TaskLayout.of(plan).component_tasks["src"][0],
                      make_serializer("msgpack"), acking, local, seed=7)
    return em, tasks


def route(em: SpoutEmitter, n: int, keys: int = 20) -> list[tuple[str, tuple[int, ...]]]:
    return [(f"k{i % keys}", em.emit([f"k{i % keys}", i])) for i in range(n)]


def test_shuffle_spreads_evenly_in_round_robin():
    em, tasks = emitter(Grouping.SHUFFLE)
    counts = Counter(t for _, ts in route(em, 4000) for t in ts)
    assert set(counts) == set(tasks)
    assert set(counts.values()) == {1000}


def test_fields_sends_each_key_to_the_one_task_storm_picks():
    em, tasks = emitter(Grouping.by_fields("key"))
    seen: dict[str, set[int]] = {}
    for key, ts in route(em, 2000):
        seen.setdefault(key, set()).update(ts)
    assert all(len(ts) == 1 for ts in seen.values())
    for key, ts in seen.items():
        assert ts == {tasks[fields_index((key,), PAR)]}
    assert len({t for ts in seen.values() for t in ts}) > 1


def test_fields_on_several_fields_uses_the_selected_values():
    em, tasks = emitter(Grouping.by_fields("key", "seq"))
    for key, ts in route(em, 200):
        seq = int(key[1:])  # keys == seqs for the first 20 emits; check those
        if seq < 20:
            assert ts == (tasks[fields_index([key, seq], PAR)],)


def test_all_sends_every_tuple_to_every_task():
    em, tasks = emitter(Grouping.ALL)
    assert all(ts == tasks for _, ts in route(em, 50))


def test_global_sends_everything_to_the_lowest_task():
    em, tasks = emitter(Grouping.GLOBAL)
    assert {ts for _, ts in route(em, 100)} == {(min(tasks),)}


def test_none_picks_one_task_at_random():
    em, tasks = emitter(Grouping.NONE)
    counts = Counter(t for _, ts in route(em, 4000) for t in ts)
    assert set(counts) == set(tasks)
    assert all(800 < c < 1200 for c in counts.values())


def test_local_or_shuffle_keeps_tuples_in_the_container_when_it_can():
    em, tasks = emitter(Grouping.LOCAL_OR_SHUFFLE, local=frozenset(tasks_subset := (2, 4)))
    assert {t for _, ts in route(em, 400) for t in ts} == set(tasks_subset)
    em, tasks = emitter(Grouping.LOCAL_OR_SHUFFLE, local=frozenset())
    assert {t for _, ts in route(em, 400) for t in ts} == set(tasks)


def test_partial_key_keeps_a_key_on_its_two_candidates_and_splits_a_hot_key():
    from heronbridge.runtime.grouping.javahash import PartialKeyChooser

    em, tasks = emitter(Grouping.partial_key("key"))
    candidates = PartialKeyChooser(PAR)
    seen: dict[str, Counter] = {}
    for i in range(4000):
        key = "hot" if i % 10 else f"k{i % 7}"  # 90% of the load on one key
        (task,) = em.emit([key, i])
        seen.setdefault(key, Counter())[task] += 1
    for key, counts in seen.items():
        assert set(counts) <= {tasks[c] for c in candidates.candidates([key])}
    assert len(seen["hot"]) == 2
    assert min(seen["hot"].values()) > 1000


def test_custom_grouping_calls_the_function():
    from rt_components import choose_even_tasks

    em, tasks = emitter(Grouping.custom_grouping(choose_even_tasks))
    for i, (_, ts) in enumerate(route(em, 40)):
        assert ts == (tasks[:1] if i % 2 == 0 else tasks[1:])


def test_a_java_custom_grouping_routes_by_its_grouping_jvms_chooser():
    """A Java custom grouping's routes go through the chooser of the task's grouping
    JVM (a stand-in here: what it is asked, what it answers); a task id it chose that is
    no target is named; without the JVM's chooser the emitter refuses to build."""
    from heronbridge.runtime.errors import PlanError

    spec = '{"class": "a.G", "args": []}'
    b = TopologyBuilder("routing")
    b.spout("src", KeySpout)
    b.bolt("sink", RecordingBolt, inputs={"src": Grouping.custom_grouping(spec)}, par=PAR)
    b.bolt("plain", RecordingBolt, inputs={"src": Grouping.SHUFFLE})
    plan = b.build()
    layout = TaskLayout.of(plan)
    tasks = layout.component_tasks["sink"]
    [plain] = layout.component_tasks["plain"]
    asked = []

    class Groupings:
        def chooser(self, stream, index, subscriber, first):
            assert (stream, subscriber, first) == ("default", "sink", tasks[0])

            def choose(values):
                asked.append(list(values))
                return [tasks[-1]] if values[1] >= 0 else [99]
            return choose

    em = SpoutEmitter(plan, layout.component_tasks["src"][0], make_serializer("msgpack"),
                      False, frozenset(), seed=7, java_groupings=Groupings())
    assert sorted(em.emit(["k", 1])) == sorted((tasks[-1], plain))
    assert asked == [["k", 1]]
    stray = re.escape(f"on stream 'default' to 'sink' must choose task ids among "
                      f"{list(tasks)}, chose [99] for values ['k', -1]")
    with pytest.raises(PlanError, match=r"the Java custom grouping .*a\.G.* " + stray):
        em.emit(["k", -1])
    with pytest.raises(PlanError, match="runs in a JVM beside the task; expected its chooser"):
        SpoutEmitter(plan, layout.component_tasks["src"][0], make_serializer("msgpack"),
                     False, frozenset(), seed=7)


def test_direct_emits_reach_the_named_task_and_only_it():
    em, tasks = emitter(Grouping.DIRECT, outputs=[Stream("to", ("key", "seq"), direct=True)])
    for t in tasks:
        assert em.emit(["k", 1], stream="to", direct_task=t) == (t,)
    assert em.emit(["k", 1], stream="to", direct_task=999) == ()  # Storm drops these
    with pytest.raises(ComponentError, match="stream 'to' is direct; emit on it needs"):
        em.emit(["k", 1], stream="to")


def test_bad_emits_name_the_task_and_what_was_expected():
    em, _ = emitter(Grouping.SHUFFLE)
    with pytest.raises(ComponentError, match=r"task 5: emit on undeclared stream 'other'; "
                                             r"declared streams are \['default'\]"):
        em.emit(["k", 1], stream="other")
    with pytest.raises(ComponentError, match=r"expects 2 values for fields \['key', 'seq'\], "
                                             r"received 1"):
        em.emit(["k"])
    with pytest.raises(ComponentError, match="expects a list of values, received str"):
        em.emit("k1")
    with pytest.raises(ComponentError, match="which is not a direct stream"):
        em.emit(["k", 1], direct_task=1)


def test_each_emit_counts_once_whatever_its_targets():
    from heronbridge.runtime.instance.emitter import BoltEmitter

    b = TopologyBuilder("counting")
    b.spout("src", KeySpout)
    b.bolt("mid", RecordingBolt, inputs=["src"], outputs={"default": ["key", "seq"],
                                                         "unheard": ["key", "seq"]})
    b.bolt("one", RecordingBolt, inputs=["mid"])
    b.bolt("every", RecordingBolt, inputs={"mid": Grouping.ALL}, par=3)
    plan = b.build()
    layout = TaskLayout.of(plan)
    em = BoltEmitter(plan, layout.component_tasks["mid"][0], make_serializer("msgpack"),
                     False, frozenset())
    for i in range(10):
        assert len(em.emit(["k", i])) == 4  # one task of `one`, three of `every`
        assert em.emit(["k", i], stream="unheard") == ()
    em.flush()
    assert em.emitted == 20


def test_report_error_logs_with_the_task_and_counts(caplog):
    em, _ = emitter(Grouping.SHUFFLE)
    try:
        raise ValueError("bad row 7")  # noqa: EM101
    except ValueError as exc:
        em.report_error(exc)
    assert em.errors_reported == 1
    expected = "topology 'routing', component 'src', task 5: reported error: ValueError: bad row 7"
    assert expected in caplog.text
