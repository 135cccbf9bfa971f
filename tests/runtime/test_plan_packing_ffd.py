"""First fit decreasing packing, and repacking for an update: surviving instances stay,
task ids are Storm's for the new plan."""

from __future__ import annotations

import pytest
from rt_components import KeySpout, RecordingBolt

from heronbridge.runtime import Grouping, TopologyBuilder
from heronbridge.runtime.errors import ConfigError, PlanError
from heronbridge.runtime.plan.packing import (
    GIB,
    first_fit_decreasing,
    pack,
    repack,
    resources_of,
    round_robin,
)
from heronbridge.runtime.plan.rescale import rescaled


def plan(**config):
    b = TopologyBuilder("t", config)
    words = b.spout("words", KeySpout)
    b.bolt("count", RecordingBolt, inputs={words: Grouping.by_fields("key")}, par=4)
    b.bolt("audit", RecordingBolt, inputs=[words], par=2)
    return b.build()


def shape(packing):
    return [[(i.component, i.task_id) for i in c.instances] for c in packing.containers]


def test_ffd_places_the_largest_instances_first_within_the_container_limits():
    p = plan(**{"heronbridge.packing": "ffd", "topology.component.rammap": {"count": 2 * GIB},
                "topology.container.max.ram.hint": 5 * GIB,
                "topology.container.max.cpu.hint": 10})
    packing = pack(p, 1)
    # Usable RAM 4.5 GiB (10% padding): two 2 GiB counts per container; the 1 GiB rest
    # fit in neither, so they open a third. Ids: audit 1-2, count 3-6, words 7.
    assert shape(packing) == [[("count", 3), ("count", 4)], [("count", 5), ("count", 6)],
                              [("audit", 1), ("audit", 2), ("words", 7)]]
    need = resources_of(p, packing)
    assert all(r.ram <= 4.5 * GIB and r.cpu <= 9 for r in need.values())


def test_ffd_sorts_by_cpu_when_asked_and_honours_the_density_limit():
    p = plan(**{"heronbridge.packing": "ffd", "topology.packing.ffd.sorting.strategy":
                "CPU_FIRST", "topology.component.cpumap": "audit:3,count:1",
                "topology.container.max.cpu.hint": 8, "topology.container.max.instances": 3,
                "topology.container.max.ram.hint": 64 * GIB})
    packing = first_fit_decreasing(p)
    assert shape(packing)[0][:2] == [("audit", 1), ("audit", 2)]
    assert all(len(c.instances) <= 3 for c in packing.containers)


def test_ffd_refuses_an_instance_larger_than_any_container():
    p = plan(**{"heronbridge.packing": "ffd", "topology.component.rammap": {"count": 8 * GIB}})
    with pytest.raises(PlanError, match=r"component 'count': one instance needs"):
        pack(p, 1)
    with pytest.raises(ConfigError, match=r"no such component: \['counter'\]"):
        pack(plan(**{"heronbridge.packing": "ffd",
                     "topology.component.rammap": "counter:1"}), 1)
    with pytest.raises(ConfigError, match="expects 'round-robin' or 'ffd'"):
        pack(plan(**{"heronbridge.packing": "best"}), 1)


@pytest.mark.parametrize("algorithm", ["round-robin", "ffd"])
def test_repack_keeps_surviving_instances_where_they_were(algorithm):
    p = plan(**{"heronbridge.packing": algorithm, "topology.container.max.cpu.hint": 5})
    old = pack(p, 2)
    bigger = rescaled(p, {"count": 6})
    new = repack(old, bigger)
    before, after = old.placement(), new.placement()
    assert all(after[k] == c for k, c in before.items())  # nothing moved
    assert sorted(k[1] for k in after if k[0] == "count") == list(range(6))
    # Storm's ids for the new plan: audit 1-2, count 3-8, words 9.
    assert sorted(i.task_id for c in new.containers for i in c.instances
                  if i.component == "count") == [3, 4, 5, 6, 7, 8]
    smaller = repack(new, rescaled(bigger, {"count": 1}))
    assert {k for k in smaller.placement() if k[0] == "count"} == {("count", 0)}
    assert smaller.placement()[("count", 0)] == before[("count", 0)]


def test_repack_to_a_new_container_count_packs_anew():
    p = plan()
    new = repack(round_robin(p, 2), p, containers=3)
    assert new == round_robin(p, 3)
