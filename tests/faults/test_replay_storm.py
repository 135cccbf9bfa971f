"""Issue 25: a stream manager's death (or a task's, an executor's, the master's) must not
turn into a fail/replay loop. The project's shape, rebuilt: pystorm's ReliableSpout with
its default max_fails (3: a fourth fail makes it ack the id itself), 3,000 ids at 100/s,
a relay (par 3, shuffle) and a sink (par 3, fields on the key), a 5 s message timeout;
one process SIGKILLed 8 s in. Every id whose ack reached the spout must be in the sink's
file, and no id may fail more than twice."""

from __future__ import annotations

import pytest
from nemeses import Kill
from suite import RelayWorkload, alone, size, stage_for

pytestmark = [pytest.mark.faults, pytest.mark.integration]

VICTIMS = {"stream manager": Kill("stream manager"), "relay task": Kill("task", "relay"),
           "sink task": Kill("task", "sink"), "executor": Kill("executor"),
           "topology master": Kill("topology master")}
# At the CI size each victim in three containers, and the stream manager in one, once;
# at `full` size every victim in one and in three containers, 20 times each.
CASES = ([(v, c, n) for v in VICTIMS for c in (1, 3) for n in range(20)]
         if size() == "full" else [*((v, 3, 0) for v in VICTIMS), ("stream manager", 1, 0)])


@pytest.mark.compat("api/ReliableSpout", "api/message timeouts", "api/fail")
@pytest.mark.parametrize(("victim", "containers", "run"), CASES,
                         ids=[f"{v}-{c}-container{'s' * (c > 1)}-run-{n + 1}"
                              for v, c, n in CASES])
def test_no_acked_id_is_lost_and_none_fails_more_than_twice(home, state, tmp_path, victim,
                                                              containers, run, record_row):
    workload = RelayWorkload(home, state, tmp_path, containers)
    with workload.running:
        row = alone(workload, stage_for(workload, tmp_path), VICTIMS[victim], at=8)
    row.scheduler = "local"
    record_row(row)
    assert row.lost == 0, row.detail
    assert row.max_fails <= 2, row.detail
