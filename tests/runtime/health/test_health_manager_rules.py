"""The health manager's rules without processes: one scale-up, then the cool-down; at
the parallelism ceiling a decision to do nothing, logged once per cool-down."""

from __future__ import annotations

import pytest
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
    # Checked after the cool-down: still backpressured, so it did not help.
    assert kinds[1] == ("blacklisted", "under-provisioned") and when[1] == 13
    # At the ceiling: nothing more to do, said once per cool-down.
    assert kinds[2:] == [("none", "under-provisioned")] * 3
    assert "parallelism 1 -> 3" in taken[0].detail and "at the ceiling" in taken[2].detail
    assert all(b - a >= 10 for a, b in zip(when[2:], when[3:], strict=False))
    assert [a.line() for a in read_actions(state, "rules")] == [a.line() for a in taken]


def held_spout(now: float, tasks: list[int], after: str) -> control_pb2.MetricsReport:
    """A spout held by its window 600 ms of every second while one task of `work` is busy
    all the time; once scaled, `after`: "served" (held no more, 200/s where it was 80/s),
    "same" (nothing changed), or "idler" (the tasks idle most of the time, so the bolt is
    no longer at capacity, but the spout is as held and as slow as before)."""
    ms = int(now * 1000)
    scaled = len(tasks) > 1
    served = scaled and after == "served"
    rate = 200 if served else 80
    busy = 0.8 if served else 0.3 if scaled and after == "idler" else 0.99
    spout = control_pb2.TaskMetrics(
        component="source", task_id=1, timestamp_ms=ms,
        counters={"window-held-ms": (0 if served else 600) * now, "ack-count": rate * now,
                  "emit-count": rate * now})
    bolts = [control_pb2.TaskMetrics(
        component="work", task_id=t, timestamp_ms=ms,
        counters={"execute-time-ns": busy * 1e9 * now,
                  "execute-count": rate / len(tasks) * now}) for t in tasks]
    return control_pb2.MetricsReport(all_ready=True, tasks=[spout, *bolts])


def held_by_work(state, monkeypatch, name: str, conf: dict, after: str,
                 clock: list[float]) -> manager.HealthManager:
    """A spout held by its bolt `work` (as held_spout reports it at clock[0], `after` the
    action), rescaled as the health manager asks; the topology's health manager."""
    b = TopologyBuilder(name, conf)
    b.spout("source", RateSpout)
    b.bolt("work", CostlyBolt, inputs=["source"])
    plan = b.build()
    publish(state, plan)

    def update(st, _name, parallelism, reason=""):
        publish(st, rescaled(plan, parallelism))
        return control_pb2.UpdateReport(paused_secs=1.0)

    monkeypatch.setattr(manager.control, "update", update)
    monkeypatch.setattr(manager.control, "metrics", lambda st, _name, timeout: held_spout(
        clock[0], [t for c in st.get(PACKING_PLANS, name).containers
                   for i in c.instances if i.component == "work" for t in [i.task_id]],
        after))
    return manager.HealthManager(state, name)


@pytest.mark.parametrize("after", ["served", "same", "idler"])
def test_an_action_is_verified_after_its_cool_down_or_blacklisted(state, monkeypatch, after):
    clock = [0.0]
    health = held_by_work(state, monkeypatch, "verify",
                          {**CONF, "heronbridge.health.max.parallelism": 8,
                           "heronbridge.health.blacklist.secs": 100}, after, clock)
    taken = []
    for second in range(40):
        clock[0] = float(second)
        taken += [(second, a) for a in health.step(now=clock[0])]
    first = taken[0][1]
    # Held 600 ms/s: 80/s served of 200/s offered, so 1 * 1000 / (1000 - 600) -> 3 tasks.
    assert (first.action, first.diagnosis, taken[0][0]) == ("scale-up", "under-provisioned", 3)
    assert "parallelism 1 -> 3" in first.detail and "held by its in-flight window" in first.why
    check = taken[1]
    assert check[0] == 13  # the cool-down over, the window full again
    if after == "served":
        assert check[1].action == "verified" and "throughput 200/s" in check[1].why
        assert "throughput rose" in check[1].detail
        assert "the spouts run at what they offer" in check[1].detail
        assert len(taken) == 2  # nothing more to do
        return
    # Judged by the figures, not by the diagnosis: gone or not, the spout is as held
    # and as slow as before the action.
    assert check[1].action == "blacklisted", check[1].text()
    assert "the spouts are still held" in check[1].detail
    if after == "idler":
        assert "the diagnosis is gone" in check[1].why and len(taken) == 2
        return
    assert "diagnosis still holds" in check[1].why
    # Diagnosed again, the same action is not taken: said once per cool-down.
    assert [(s, a.action) for s, a in taken[2:]] == [(13, "none"), (23, "none"), (33, "none")]
    assert "blacklisted: scale-up at" in taken[2][1].detail


def test_on_its_defaults_it_acts_after_a_full_window_and_verifies_after_the_cool_down(
        state, monkeypatch):
    """The defaults' timeline (the end-to-end tests shorten the cool-down): a sample
    every 10 s, nothing done before a 60 s window is full, the check 120 s after the
    action."""
    clock = [0.0]
    health = held_by_work(state, monkeypatch, "defaults", {"test.rate": 1, "test.cost": 0},
                          "served", clock)
    assert (health.conf.interval, health.conf.window, health.conf.cooldown) == (10, 60, 120)
    taken = []
    for second in range(0, 400, 10):
        clock[0] = float(second)
        taken += [(second, a.action) for a in health.step(now=clock[0])]
    assert taken == [(60, "scale-up"), (60 + 120, "verified")]
