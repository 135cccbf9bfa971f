"""The tracing hook at the runtime's component interface (effectively-once runs): the
lean component's tuples, emits, acks and fails reach the same trace records as the
multilang messages would, injected faults still hit, and a rebuilt component (a
rollback, in the same process) goes on writing the task's one trace file."""

from __future__ import annotations

from pathlib import Path

import pytest

from heronbridge.compat.projects import load_project
from heronbridge.conformance.trace import component_hook, schema, tracefile
from heronbridge.runtime.api.context import TopologyContext
from heronbridge.runtime.api.tuple import Tuple
from heronbridge.runtime.plan.tasks import TaskLayout
from heronbridge.shims.storm import keys
from heronbridge.testing.loading import Sandbox

PROJECT = (Path(__file__).resolve().parents[3] / "examples" / "storm_topologies"
           / "stateful_replays")


class Collector:
    """The runtime's bolt collector, as far as the component uses it."""

    def __init__(self) -> None:
        self.emitted: list[list] = []
        self.acked: list[Tuple] = []
        self.failed: list[Tuple] = []

    def emit(self, values, stream="default", anchors=None, direct_task=None):
        self.emitted.append(list(values))
        return (7,)

    def ack(self, tup):
        self.acked.append(tup)

    def fail(self, tup):
        self.failed.append(tup)


@pytest.fixture
def forgotten(tmp_path):
    """The project's modules (its `bolts`, imported from tmp_path) are forgotten after
    the test, so that another project's test in this process imports its own."""
    with Sandbox([tmp_path]):
        yield


def test_a_traced_bolt_across_a_rollback(tmp_path, monkeypatch, forgotten):
    monkeypatch.chdir(tmp_path)  # the component runs in its resources folder: back after
    monkeypatch.setattr(component_hook, "_HOOKS", {})
    traces = tmp_path / "traces"
    faults = [{"component": "count", "task_index": 0, "kind": "fail", "every": 3}]
    project = load_project(PROJECT, "stateful_replays", None,
                           {schema.TRACE_DIR: str(traces), schema.FAULTS: faults}, False,
                           tmp_path / "resources")
    project.install_resources(tmp_path / "resources")
    monkeypatch.syspath_prepend(str(tmp_path / "resources"))
    plan = project.plan
    spec = plan.components["count"]
    spec.config[keys.HOOK] = ""
    component_hook.stand_in(spec)
    task = TaskLayout.of(plan).component_tasks["count"][0]
    context = TopologyContext.build(plan, "stateful_replays-1", task)
    collector, state = Collector(), {}

    def started() -> component_hook.TracedComponent:
        """What the runtime does at each (re)start: a new instance, its state, prepare."""
        comp = component_hook.TracedComponent()
        comp.config, comp.context = plan.component_config("count"), context
        comp.init_state(state)
        comp.prepare(comp.config, context, collector)
        return comp

    def word(w: str) -> Tuple:
        return Tuple.make("split", "default", 5, [w], ("word",))

    comp = started()
    first = [word("a"), word("b"), word("a")]
    for tup in first:
        comp.execute(tup)
    comp.cleanup()
    comp = started()  # rolled back: the state stays, the process and its hook too
    comp.execute(word("c"))
    comp.cleanup()
    component_hook._HOOKS[("count", task)][0].close()

    # The third tuple was failed by the fault before the bolt saw it; the bolt failed
    # each first sighting (a, b, then c in the new instance) and counted on from the state.
    assert collector.emitted == [["a", 1], ["b", 1], ["c", 1]]
    assert state["counts"] == {"a": 1, "b": 1, "c": 1}
    assert collector.failed[:1] == first[:1] and first[2] in collector.failed
    files = tracefile.files(traces)
    assert [p.name.rsplit("-", 1)[0] for p in files] == [f"count-{task}"]
    records = list(tracefile.read(files[0]))
    events = [(r["ev"], r.get("injected", False)) for r in records]
    assert events.count((schema.START, False)) == 1
    assert events.count((schema.RECV, False)) == 4
    assert events.count((schema.FAIL, True)) == 1
    assert events.count((schema.FAIL, False)) == 3
    emits = [r for r in records if r["ev"] == schema.EMIT]
    assert [(e["values"], e["targets"]) for e in emits] == [
        ('["a",1]', [7]), ('["b",1]', [7]), ('["c",1]', [7])]
    received = {r["id"]: r["values"] for r in records if r["ev"] == schema.RECV}
    assert [received[a] for e in emits for a in e["anchors"]] == ['["a"]', '["b"]', '["c"]']
