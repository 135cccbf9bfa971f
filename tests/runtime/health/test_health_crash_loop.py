"""A task that crashes every few seconds is restarted, and the action log (in
`heronbridge list` too) says why; nothing is scaled."""

from __future__ import annotations

import pytest
from health_components import CrashingBolt
from healthkit import first_actions, parallelism, topology
from testkit import Running, heronbridge, wait_until

from heronbridge.runtime import control


@pytest.mark.integration
def test_a_crash_looping_task_is_restarted_and_the_log_says_why(home, state):
    plan = topology("crashing-health", CrashingBolt, 50,
                    **{"test.crash.secs": 1.5, "heronbridge.restart.backoff.secs": 0.2,
                       "heronbridge.health.window.secs": 6.0})
    with Running(plan, home, state) as run:
        log = first_actions(run, state, plan.name)
        assert log, run.logs()[-4000:]
        first = log[0]
        print("\n  action:", first.text())
        assert (first.action, first.diagnosis, first.component) == \
            ("restart", "failing-task", "work")
        assert "restarted" in first.why and "crash drill" in first.why
        assert parallelism(state, plan.name) == 1
        wait_until(lambda: any(t.counters.get("health-actions/restart", 0) >= 1
                               for t in control.metrics(state, plan.name).tasks
                               if t.component == "__healthmgr__"), 30,
                   "the health manager's action counted in its metrics")
        listed = heronbridge("list", "--home", str(home.root), timeout=60)
        assert listed.returncode == 0, listed.stderr
        listed = listed.stdout
        assert "failing-task" in listed and "crash drill" in listed, listed
