"""`heronbridge update` on a running at-least-once word count (the durable example):
count goes from 2 to 4 tasks and back while lines flow; no line is lost, every word
occurrence is counted, and the spouts' pause is printed."""

from __future__ import annotations

import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "faults"))
from faultkit import DurableRun  # noqa: E402

from heronbridge.runtime.control import update  # noqa: E402
from heronbridge.runtime.plan import TaskLayout  # noqa: E402
from heronbridge.runtime.plan.codec import packing_from_proto, topology_from_proto  # noqa: E402
from heronbridge.runtime.plan.rescale import UpdateError  # noqa: E402
from heronbridge.runtime.statemgr import PACKING_PLANS, PHYSICAL_PLANS, TOPOLOGIES  # noqa: E402

LINES = 4000


def acked(out: Path) -> set[int]:
    """Line numbers acked, across every spout task's file (the spout's id changes)."""
    ids = set()
    for path in out.glob("log-*.jsonl"):
        for line in path.read_text().splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if record.get("event") == "ack":
                ids.add(record["id"])
    return ids


def complete(run: DurableRun) -> bool:
    return (acked(run.out) == set(range(len(run.text))) and run.committed() == len(run.text)
            and run.counted() >= run.expected())


def wait_for(run: DurableRun, condition, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run.running.check()  # the supervisor follows the packing plan here
        if condition():
            return
        time.sleep(0.05)
    pytest.fail(f"timed out after {timeout}s waiting for {what}: {run.missing()}\n"
                f"{run.running.logs()[-6000:]}")


def updating(run: DurableRun, *args, **kwargs):
    """`update` from another thread, while this one supervises the containers (as the
    scheduler's own process does beside the command line's)."""
    with ThreadPoolExecutor(1) as pool:
        future = pool.submit(update, run.state, run.plan.name, *args, **kwargs)
        while not future.done():
            run.running.check()
            time.sleep(0.05)
        return future.result()


def count_tasks(run: DurableRun) -> tuple[int, ...]:
    plan = topology_from_proto(run.state.get(TOPOLOGIES, run.plan.name))
    return TaskLayout.of(plan).component_tasks["count"]


@pytest.mark.integration
def test_count_goes_from_2_to_4_tasks_and_back_losing_nothing(home, state, tmp_path):
    run = DurableRun(home, state, tmp_path, containers=2, lines=LINES)
    name = run.plan.name
    with run.running:
        wait_for(run, lambda: len(acked(run.out)) > 300, 60, "the first acks")
        up = update(state, name, {"count": 4}, reason="test: scale up")
        assert count_tasks(run) == (2, 3, 4, 5)  # Storm's ids for the new plan: __acker is 1
        packing = packing_from_proto(state.get(PACKING_PLANS, name))
        assert sorted(i.task_id for c in packing.containers for i in c.instances
                      if i.component == "count") == [2, 3, 4, 5]
        during = len(acked(run.out))
        wait_for(run, lambda: len(acked(run.out)) > during + 300, 60, "acks after scaling up")
        down = update(state, name, {"count": 2}, reason="test: scale down")
        assert count_tasks(run) == (2, 3)
        wait_for(run, lambda: complete(run), 120, "every line acked and counted")
        for label, report in (("2 -> 4", up), ("4 -> 2", down)):
            print(f"\nupdate count {label}: spouts paused {report.paused_secs:.2f}s "
                  f"(draining {report.drain_secs:.2f}s, {report.trees_in_flight} trees in "
                  f"flight at the switch); started tasks {list(report.started_tasks)}, "
                  f"stopped {list(report.stopped_tasks)}")
    assert acked(run.out) == set(range(LINES))
    assert run.counted() >= run.expected()


@pytest.mark.integration
def test_update_refuses_by_name_then_adds_a_container_and_drops_it_again(home, state,
                                                                         tmp_path):
    run = DurableRun(home, state, tmp_path, containers=1, lines=1500)
    name = run.plan.name

    def stmgrs() -> list[int]:
        return sorted(s.container for s in state.get(PHYSICAL_PLANS, name).stmgrs)

    with run.running:
        with pytest.raises(UpdateError, match=r"component 'counter': no such component"):
            update(state, name, {"counter": 3})
        with pytest.raises(UpdateError, match=r"component 'split': parallelism must be an "
                                              r"integer >= 1, received 0"):
            update(state, name, {"split": 0})
        dry = update(state, name, {"split": 3}, dry_run=True)
        assert dry.new_packing_id != dry.old_packing_id
        assert count_tasks(run) == (2, 3)  # a dry run changes nothing
        wait_for(run, lambda: len(acked(run.out)) > 100, 60, "the first acks")
        grown = updating(run, {"count": 3}, containers=2)
        assert list(grown.added_containers) == [1] and stmgrs() == [0, 1]
        shrunk = updating(run, {"count": 2}, containers=1)
        assert list(shrunk.removed_containers) == [1] and stmgrs() == [0]
        wait_for(run, lambda: complete(run), 120, "every line acked and counted")
        wait_for(run, lambda: len(run.running.supervisor.executors) == 1, 30,
                 "the dropped container's executor to stop")
