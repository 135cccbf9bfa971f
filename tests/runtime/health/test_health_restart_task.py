"""Restarting one task through the topology master (the slow-instance resolver's
action): its stream manager ends it, its executor starts it again, nothing else moves."""

from __future__ import annotations

import pytest
from health_components import CostlyBolt, RateSpout
from healthkit import QUICK_HEALTH
from testkit import Running, wait_until

from heronbridge.runtime import TopologyBuilder, control
from heronbridge.runtime.control import restart_task
from heronbridge.runtime.plan import TaskLayout


@pytest.mark.integration
def test_a_task_is_restarted_on_request(home, state):
    b = TopologyBuilder("restarted", {**QUICK_HEALTH, "heronbridge.health": "off",
                                      "test.rate": 100, "test.cost": 0})
    b.spout("source", RateSpout)
    b.bolt("sink", CostlyBolt, inputs=["source"], par=2)
    plan = b.build()
    sink = TaskLayout.of(plan).component_tasks["sink"]

    def incarnations() -> dict[int, int]:
        return {t.task_id: t.incarnation for t in control.metrics(state, plan.name).tasks
                if t.task_id >= 0}

    with Running(plan, home, state) as run:
        wait_until(lambda: len(incarnations()) == 3, 30, "every task's metrics")
        restart_task(state, plan.name, sink[0], "test: a slow instance")
        after = wait_until(lambda: (i := incarnations())[sink[0]] == 1 and i, 60,
                           "the task's next incarnation", on_timeout=run.logs)
        assert after[sink[1]] == 0 and all(v == 0 for t, v in after.items() if t != sink[0])
