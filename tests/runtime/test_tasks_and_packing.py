"""Task ids follow Storm's rule; packing deals tasks round robin into containers."""

from __future__ import annotations

from rt_components import KeySpout, RecordingBolt

from heronbridge.runtime import Grouping, TopologyBuilder
from heronbridge.runtime.plan import TaskLayout, round_robin
from heronbridge.runtime.plan.codec import packing_from_proto, packing_to_proto


def quickstart(reserve_acker: bool = True):
    b = TopologyBuilder("wordcount")
    words = b.spout("word_spout", KeySpout)
    b.bolt("count_bolt", RecordingBolt, inputs={words: Grouping.by_fields("key")}, par=2)
    if reserve_acker:
        b.reserve("__acker", 1)
    return b.build()


def test_task_ids_match_storms_quickstart_assignment():
    # Storm 2.x local mode: __acker=1, count_bolt=2,3, word_spout=4.
    layout = TaskLayout.of(quickstart())
    assert layout.component_tasks == {"__acker": (1,), "count_bolt": (2, 3),
                                      "word_spout": (4,)}
    assert layout.runnable(quickstart()) == [2, 3, 4]
    assert layout.index_of(3) == 1


def test_components_sort_as_java_strings():
    # Java compares UTF-16 code units: uppercase and digits before '_', '_' before lowercase,
    # and a BMP character above the surrogates after an astral one.
    b = TopologyBuilder("t")
    for name in ("b", "B", "9", "a_", "a\uff01", "a\U0001f600"):
        b.spout(name, KeySpout)
    layout = TaskLayout.of(b.build())
    order = sorted(layout.component_tasks, key=lambda n: layout.component_tasks[n])
    assert order == ["9", "B", "a_", "a\U0001f600", "a\uff01", "b"]


def test_round_robin_packing_deals_tasks_over_containers():
    plan = quickstart(reserve_acker=False)
    packing = round_robin(plan, 2)
    assert [[i.task_id for i in c.instances] for c in packing.containers] == [[1, 3], [2]]
    assert packing.container_of(2) == 1
    assert packing_from_proto(packing_to_proto(packing)) == packing


def test_packing_never_makes_more_containers_than_tasks():
    plan = quickstart(reserve_acker=False)
    assert len(round_robin(plan, 10).containers) == 3
