"""kill -9 of each process kind, in one container and in three, in the middle of an
at-least-once word count whose spout replays from a durable log: no line is lost (every
line acked, every word occurrence counted at least once), and the recovery is timed.
At the CI size each layout is one run whose processes are killed in turn, each once the
last has recovered (spread over the lines); at `full` size every kind in every layout has
a run of its own."""

from __future__ import annotations

import pytest
from faultkit import KINDS, DurableRun, kill_and_recover, kill_in_turn
from suite import size

pytestmark = [pytest.mark.faults, pytest.mark.integration]

LINES = 4000
FULL = size() == "full"
# In one container only a stream manager's or an executor's death takes the spout with
# it (a path of its own); the other kinds in one container run at the full size.
ONE_CONTAINER = KINDS if FULL else ("stream manager", "executor")
CASES = [(kind, n) for kind in KINDS for n in (1, 3) if n == 3 or kind in ONE_CONTAINER]

if FULL:

    @pytest.mark.compat("api/anchoring", "api/ack")
    @pytest.mark.parametrize(("kind", "containers"), CASES,
                             ids=[f"{k}-{n}-container{'s' if n > 1 else ''}" for k, n in CASES])
    def test_no_line_is_lost_when_a_process_is_killed(home, state, tmp_path, kind, containers,
                                                      record_recovery):
        run = DurableRun(home, state, tmp_path, containers, LINES)
        with run.running:
            outcome = kill_and_recover(run, kind)
        record_recovery(outcome.record())
        assert run.complete(), run.missing()

else:

    @pytest.mark.compat("api/anchoring", "api/ack")
    @pytest.mark.parametrize("containers", [1, 3],
                             ids=lambda n: f"{n}-container{'s' if n > 1 else ''}")
    def test_no_line_is_lost_when_processes_are_killed_in_turn(home, state, tmp_path,
                                                               containers, record_recovery):
        kinds = tuple(k for k, n in CASES if n == containers)
        # As many lines between two kills as a run of its own has before its kill.
        run = DurableRun(home, state, tmp_path, containers, LINES * (len(kinds) + 1) // 4)
        with run.running:
            outcomes = kill_in_turn(run, kinds)
        for outcome in outcomes:
            record_recovery(outcome.record())
        assert run.complete(), run.missing()
