"""A bolt at parallelism 1, three times too slow for its input, is scaled up by the
health manager until backpressure is gone."""

from __future__ import annotations

import time

import pytest
from health_components import CostlyBolt
from healthkit import Probe, actions, parallelism, topology
from testkit import Running

RATE = 240  # tuples/s offered
COST = 3 / RATE  # seconds per tuple: one task handles a third of the input


@pytest.mark.integration
def test_an_under_provisioned_bolt_is_scaled_until_backpressure_is_gone(home, state):
    plan = topology("slow-bolt-health", CostlyBolt, RATE, **{"test.cost": COST})
    with Running(plan, home, state) as run:
        probe = Probe(state, plan.name)
        first_scale = recovered = None
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            time.sleep(0.5)
            run.check()
            probe.sample()
            now = probe.points[-1][0] if probe.points else 0.0
            if first_scale is None and parallelism(state, plan.name) > 1:
                first_scale = now
            if first_scale is not None and now > first_scale + 3:
                rate, bp = probe.mean(now - 3)
                if bp < 20 and rate > RATE * 0.8:
                    recovered = now
                    break
        log = actions(state, plan.name)
        assert recovered is not None, (probe.points, log, run.logs()[-4000:])
        before_rate, before_bp = probe.mean(1.0, first_scale)
        after_rate, after_bp = probe.mean(recovered - 3)
        scaled = [a for a in log if a.action == "scale-up"]
        assert scaled and all(a.diagnosis == "under-provisioned" for a in scaled)
        assert 1 < parallelism(state, plan.name) <= 6
        assert after_rate > 1.5 * before_rate
        print(f"\nslow bolt: recovered {recovered:.1f}s after start "
              f"({recovered - first_scale:.1f}s after the first scale-up); sink "
              f"{before_rate:.0f} tuples/s with "
              f"{before_bp:.0f} ms/s backpressure before, {after_rate:.0f} tuples/s with "
              f"{after_bp:.0f} ms/s after, at parallelism {parallelism(state, plan.name)}")
        for a in log:
            print("  action:", a.text())
