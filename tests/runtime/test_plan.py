"""Logical plans: validation refuses bad plans with errors that name the component."""

from __future__ import annotations

import pytest
from rt_components import KeySpout, RecordingBolt

from heronbridge.runtime import Grouping, PlanError, Stream, TopologyBuilder
from heronbridge.runtime.plan import LogicalPlan
from heronbridge.runtime.plan.codec import topology_from_proto, topology_to_proto


def base() -> TopologyBuilder:
    b = TopologyBuilder("t")
    b.spout("keys", KeySpout)
    return b


def test_a_valid_plan_builds_and_round_trips_through_protobuf():
    b = base()
    b.bolt("rec", RecordingBolt, inputs={"keys": Grouping.by_fields("key")}, par=3,
           config={"x": 1})
    plan = b.build()
    again = topology_from_proto(topology_to_proto(plan, "t-1"))
    assert again == plan
    assert plan.components["rec"].class_path == "rt_components:RecordingBolt"
    assert plan.component_config("rec")["x"] == 1


@pytest.mark.parametrize(("make", "expected"), [
    (lambda b: b.bolt("rec", RecordingBolt, inputs=["nosuch"]),
     "component 'rec': subscribes to unknown component 'nosuch'; expected one of"),
    (lambda b: b.bolt("rec", RecordingBolt, inputs=["keys:other"]),
     "component 'rec': subscribes to unknown stream 'other' of 'keys'; expected one of "
     "['default']"),
    (lambda b: b.bolt("rec", RecordingBolt, inputs={"keys": Grouping.by_fields("colour")}),
     "component 'rec': groups keys:default by unknown field 'colour'; the stream's fields "
     "are ['key', 'seq']"),
    (lambda b: b.bolt("rec", RecordingBolt, inputs=["keys"], par=0),
     "component 'rec': parallelism must be an integer >= 1, received 0"),
    (lambda b: b.bolt("rec", RecordingBolt, inputs=[]),
     "component 'rec': a bolt needs at least one input, received none"),
    (lambda b: b.bolt("rec", RecordingBolt, inputs={"keys": Grouping.DIRECT}),
     "component 'rec': direct grouping on stream keys:default, which is not a direct stream"),
    (lambda b: b.bolt("__rec", RecordingBolt, inputs=["keys"]),
     "component '__rec': component names must be non-empty and not start with '__'"),
])
def test_bad_plans_are_refused_with_the_component_named(make, expected):
    b = base()
    make(b)
    with pytest.raises(PlanError) as err:
        b.build()
    assert expected in str(err.value)
    assert "topology 't'" in str(err.value)


def test_a_cycle_is_refused_naming_its_path():
    b = base()
    b.bolt("a", RecordingBolt, inputs=["keys", "c"])
    b.bolt("b", RecordingBolt, inputs=["a"])
    b.bolt("c", RecordingBolt, inputs=["b"])
    with pytest.raises(PlanError, match=r"has a cycle \(a -> b -> c -> a\)"):
        b.build()


def test_a_component_declared_twice_is_refused():
    b = base()
    with pytest.raises(PlanError, match="component 'keys': declared twice"):
        b.spout("keys", KeySpout)


def test_a_topology_needs_a_spout():
    plan = LogicalPlan("t", {})
    with pytest.raises(PlanError, match="expected at least one spout, received none"):
        plan.validate()


def test_a_spout_cannot_have_inputs():
    b = base()
    plan = b.build()
    plan.components["keys"].inputs = list(base().build().components["keys"].inputs)
    from heronbridge.runtime.plan import Input

    plan.components["keys"].inputs.append(Input("keys", "default", Grouping.SHUFFLE))
    with pytest.raises(PlanError, match="component 'keys': a spout cannot have inputs"):
        plan.validate()


def test_direct_streams_take_only_direct_grouping():
    b = TopologyBuilder("t")
    b.spout("src", KeySpout, outputs=[Stream("to", ("seq",), direct=True)])
    b.bolt("sink", RecordingBolt, inputs={"src:to": Grouping.SHUFFLE})
    with pytest.raises(PlanError, match="shuffle grouping on stream src:to, which is a direct"):
        b.build()


def test_classes_defined_inside_functions_are_refused():
    class Local(KeySpout):
        pass

    with pytest.raises(PlanError, match="defined at module level"):
        base().spout("local", Local)
