"""kill -9 of each process kind, in one container and in three, in the middle of an
at-least-once word count whose spout replays from a durable log: no line is lost (every
line acked, every word occurrence counted at least once), and the recovery is timed."""

from __future__ import annotations

import pytest
from faultkit import KINDS, DurableRun, kill_and_recover

pytestmark = [pytest.mark.faults, pytest.mark.integration]

LINES = 4000


@pytest.mark.parametrize("containers", [1, 3], ids=["1-container", "3-containers"])
@pytest.mark.parametrize("kind", KINDS)
def test_no_line_is_lost_when_a_process_is_killed(home, state, tmp_path, kind, containers,
                                                  record_recovery):
    run = DurableRun(home, state, tmp_path, containers, LINES)
    with run.running:
        outcome = kill_and_recover(run, kind)
    record_recovery(outcome.record())
    assert run.complete(), run.missing()
