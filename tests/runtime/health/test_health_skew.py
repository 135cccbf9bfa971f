"""A skewed key under fields grouping is diagnosed as data skew and not scaled: more
tasks could not share one key."""

from __future__ import annotations

import time

import pytest
from health_components import CostlyBolt
from healthkit import actions, first_actions, parallelism, topology
from testkit import Running

from heronbridge.runtime import Grouping

RATE = 150  # tuples/s, 90% of them with the key "hot"
COST = 0.01  # one task handles 100/s: the hot key's task is too slow, the other idles


@pytest.mark.integration
def test_a_skewed_key_is_diagnosed_as_skew_and_not_scaled(home, state):
    plan = topology("skewed-health", CostlyBolt, RATE, Grouping.by_fields("key"), par=2,
                    **{"test.cost": COST, "test.hot": 0.9,
                       "heronbridge.health.window.secs": 8.0})
    with Running(plan, home, state) as run:
        first_actions(run, state, plan.name)
        time.sleep(3)  # a few more rounds: it must still not scale
        log = actions(state, plan.name)
        for a in log:
            print("\n  action:", a.text())
        assert log, run.logs()[-4000:]
        assert [(a.action, a.diagnosis, a.component) for a in log] == \
            [("none", "data-skew", "work")]
        assert parallelism(state, plan.name) == 2
