"""The health manager's rules without processes: one scale-up, then the cool-down; at
the parallelism ceiling a decision to do nothing, logged once per cool-down."""

from __future__ import annotations

from health_components import CostlyBolt, RateSpout

from heronbridge.runtime import TopologyBuilder
from heronbridge.runtime.health import manager
from heronbridge.runtime.health.actions import read_actions
from heronbridge.runtime.plan.codec import packing_to_proto, topology_to_proto
from heronbridge.runtime.plan.packing import round_robin
from heronbridge.runtime.plan.rescale import rescaled
from heronbridge.runtime.proto import control_pb2
from heronbridge.runtime.statemgr import PACKING_PLANS, TOPOLOGIES

CONF = {"heronbridge.health.interval.secs": 1.0, "heronbridge.health.window.secs": 3.0,
        "heronbridge.health.cooldown.secs": 10.0, "heronbridge.health.max.parallelism": 3,
        "test.rate": 1, "test.cost": 0}


def publish(state, plan):
    state.put(TOPOLOGIES, plan.name, topology_to_proto(plan, "t-1"))
    state.put(PACKING_PLANS, plan.name, packing_to_proto(round_robin(plan, 1)))


def backpressured(now: float, tasks: list[int]) -> control_pb2.MetricsReport:
    """Every bolt task held backpressure 900 ms of every second so far."""
    held = {f"backpressure-ms/task/{t}": 900 * now for t in tasks}
    stmgr = control_pb2.TaskMetrics(component="__stmgr__", task_id=-1,
                                    timestamp_ms=int(now * 1000), counters=held)
    return control_pb2.MetricsReport(all_ready=True, tasks=[stmgr])


def test_scale_up_then_cool_down_then_the_ceiling(state, monkeypatch):
    b = TopologyBuilder("rules", CONF)
    b.spout("source", RateSpout)
    b.bolt("work", CostlyBolt, inputs=["source"])
    plan = b.build()
    publish(state, plan)
    asked = []

    def update(st, name, parallelism, reason=""):
        asked.append(dict(parallelism))
        publish(st, rescaled(plan, parallelism))
        return control_pb2.UpdateReport(paused_secs=1.0)

    current = {"tasks": [2]}
    monkeypatch.setattr(manager.control, "update", update)
    monkeypatch.setattr(manager.control, "metrics",
                        lambda st, name, timeout: backpressured(clock[0], current["tasks"]))
    health = manager.HealthManager(state, "rules")
    clock = [0.0]
    taken, when = [], []
    for second in range(40):
        clock[0] = float(second)
        step = health.step(now=clock[0])
        taken += step
        when += [second] * len(step)
        current["tasks"] = [t for c in state.get(PACKING_PLANS, "rules").containers
                            for i in c.instances if i.component == "work"
                            for t in [i.task_id]]
    # 900 ms/s on one task: 1 * (1 + 900/100) capped at 4x more, under the ceiling of 3.
    assert asked == [{"work": 3}]
    kinds = [(a.action, a.diagnosis) for a in taken]
    assert kinds[0] == ("scale-up", "under-provisioned")
    # Still backpressured at the ceiling: nothing more to do, said once per cool-down.
    assert kinds[1:] == [("none", "under-provisioned")] * 3
    assert "parallelism 1 -> 3" in taken[0].detail and "at the ceiling" in taken[1].detail
    assert all(b - a >= 10 for a, b in zip(when, when[1:], strict=False))
    assert [a.line() for a in read_actions(state, "rules")] == [a.line() for a in taken]
