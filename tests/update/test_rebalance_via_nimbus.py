"""Nimbus's `rebalance` is `heronbridge update`: executor counts become the components'
parallelism; the topology shows REBALANCING until it is done; what the update refuses
is refused with InvalidTopologyException."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "runtime"))
from rt_components import EndlessSpout, RecordingBolt  # noqa: E402
from testkit import Running  # noqa: E402

from heronbridge.nimbus.service import NimbusService  # noqa: E402
from heronbridge.runtime import Grouping, TopologyBuilder  # noqa: E402
from heronbridge.runtime.plan.codec import topology_from_proto  # noqa: E402
from heronbridge.runtime.statemgr import TOPOLOGIES  # noqa: E402


@pytest.mark.integration
def test_rebalance_changes_parallelism_through_update(home, state, tmp_path):
    b = TopologyBuilder("rebalanced", {"test.out": str(tmp_path / "out"),
                                       "topology.stateful": True})
    b.spout("source", EndlessSpout)
    # Keyed, so the stateful topology's sink may change size (its state splits by key).
    b.bolt("sink", RecordingBolt, inputs={"source": Grouping.by_fields("key")})
    plan = b.build()
    nimbus = NimbusService(home, state)
    t = nimbus.t
    with Running(plan, home, state) as run:
        with pytest.raises(t.InvalidTopologyException, match="a spout of a stateful topology"):
            nimbus.rebalance(plan.name, t.RebalanceOptions(num_executors={"source": 2}))
        with pytest.raises(t.InvalidTopologyException, match="Invalid component nosuch"):
            nimbus.rebalance(plan.name, t.RebalanceOptions(num_executors={"nosuch": 2}))
        nimbus.rebalance(plan.name, t.RebalanceOptions(num_executors={"sink": 3,
                                                                      "__acker": 1}))
        seen = {nimbus.getTopologyInfoByName(plan.name).status}
        deadline = time.monotonic() + 60
        while plan.name in nimbus.rebalancing and time.monotonic() < deadline:
            run.check()
            time.sleep(0.1)
        seen.add(nimbus.getTopologyInfoByName(plan.name).status)
        assert seen == {"REBALANCING", "ACTIVE"}
        after = topology_from_proto(state.get(TOPOLOGIES, plan.name))
        assert after.components["sink"].parallelism == 3
