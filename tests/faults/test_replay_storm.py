"""Issue 25: a stream manager's death must not turn into a fail/replay loop that makes
pystorm's ReliableSpout (max_fails 3) ack ids the sink never saw."""

from __future__ import annotations

import pytest
from relaykit import RelayRun

pytestmark = [pytest.mark.faults, pytest.mark.integration]


@pytest.mark.parametrize("containers", [3], ids=["3-containers"])
def test_issue_shape_loses_no_acked_id(home, state, tmp_path, containers, capsys):
    run = RelayRun(home, state, tmp_path, containers)
    with run.running:
        verdict = run.kill_at(8, "stream manager")
    with capsys.disabled():
        print("\n" + verdict.summary())
    assert verdict.lost == [], verdict.summary()
    assert verdict.max_fails <= 2, verdict.summary()
