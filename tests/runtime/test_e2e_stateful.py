"""EFFECTIVELY_ONCE: checkpoints complete, and a killed task rolls the whole topology
back to the newest one, so every word is counted exactly once."""

from __future__ import annotations

import json
import os
import signal
import time

import pytest
from stateful_components import CountBolt, LineSpout, SplitBolt, expected_counts
from testkit import wait_until

from heronbridge.runtime import Grouping, TopologyBuilder
from heronbridge.runtime.plan import TaskLayout
from heronbridge.runtime.procfs import descendants
from heronbridge.runtime.statemgr import PHYSICAL_PLANS, STATEFUL_CHECKPOINTS

pytestmark = pytest.mark.integration


def counts(out, tasks=None):
    """Every word's count, from the counting tasks' files (`tasks`: only theirs)."""
    total: dict[str, int] = {}
    for path in out.glob("counts-*.json"):
        if tasks is not None and int(path.stem.split("-")[1]) not in tasks:
            continue
        for word, n in json.loads(path.read_text()).items():
            total[word] = total.get(word, 0) + n
    return total


def plan(tmp_path, lines, **extra):
    b = TopologyBuilder("stateful", {
        "topology.reliability.mode": "EFFECTIVELY_ONCE",
        "topology.stateful.checkpoint.interval.secs": 0.3,
        "topology.tick.tuple.freq.secs": 0.1,
        "heronbridge.checkpoint.root": str(tmp_path / "checkpoints"),
        "heronbridge.restart.backoff.secs": 0.1,
        "test.out": str(tmp_path), "test.lines": lines, **extra})
    b.spout("lines", LineSpout)
    b.bolt("split", SplitBolt, inputs=["lines"], par=2)
    b.bolt("count", CountBolt, inputs={"split": Grouping.by_fields("word")}, par=2)
    return b.build()


@pytest.mark.compat("config/heronbridge.checkpoint.kept")
def test_a_killed_counter_rolls_back_and_every_word_counts_once(run_topology, state, tmp_path):
    topology = plan(tmp_path, 4000, **{"test.interval": 0.0005, "heronbridge.checkpoint.kept": 2})
    want = expected_counts(4000)
    with run_topology(topology) as running:
        def consistent():
            node = state.get(STATEFUL_CHECKPOINTS, "stateful")
            return list(node.checkpoint_ids) if node is not None else []

        first = wait_until(consistent, 60, "a consistent checkpoint", on_timeout=running.logs)
        victim = TaskLayout.of(topology).component_tasks["count"][0]
        pid = int(next(line for line in running.logs().splitlines()
                       if f"task {victim}: started" in line).split("pid ")[1].rstrip(")"))
        os.kill(pid, signal.SIGKILL)
        wait_until(lambda: counts(tmp_path) == want, 90, "exact counts after the rollback",
                   interval=0.2, on_timeout=lambda: f"{counts(tmp_path)} != {want}\n"
                   + running.logs())
        assert consistent()[0] > first[0]
        # of the checkpoints completed since, the newest two are kept
        ids: set = set()
        wait_until(lambda: ids.update(consistent()) or len(ids) > 3, 30, "more checkpoints")
        assert len(consistent()) == 2
        master = running.logs()
    assert "rolling back to" in master and "task" in master
    rollbacks = master.count("topology 'stateful': rolling back to")
    assert rollbacks >= 2, master  # the start, then the kill
    # Every checkpoint folder left is a consistent one (the others were deleted).
    folders = sorted(p.name for p in (tmp_path / "checkpoints" / "stateful").iterdir())
    assert set(folders) >= set(consistent()[:1])



@pytest.mark.compat("api/stateful bolts", "config/topology.stmgrs")
@pytest.mark.parametrize("victim", ["stream manager", "topology master"])
def test_a_killed_process_of_three_containers_rolls_back_and_counts_stay_exact(
        run_topology, state, tmp_path, victim):
    topology = plan(tmp_path, 4000, **{"test.interval": 0.0005, "topology.stmgrs": 3})
    want = expected_counts(4000)
    running = run_topology(topology)
    running.hosts = {0: "127.0.0.1", 1: "127.0.0.2", 2: "127.0.0.3"}
    with running:
        wait_until(lambda: state.get(STATEFUL_CHECKPOINTS, "stateful"), 60,
                   "a consistent checkpoint", on_timeout=running.logs)
        if victim == "stream manager":
            pid = next(s.pid for s in state.get(PHYSICAL_PLANS, "stateful").stmgrs
                       if s.container == 1)
        else:
            pid = next(p.pid for p in descendants() if p.kind == "topology master")
        os.kill(pid, signal.SIGKILL)
        wait_until(lambda: counts(tmp_path) == want, 90, "exact counts after the rollback",
                   interval=0.2, on_timeout=lambda: f"{counts(tmp_path)} != {want}\n"
                   + running.logs())


def test_update_repartitions_the_counts_by_key_and_keeps_them_exact(run_topology, state,
                                                                     tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    from heronbridge.runtime.control import update
    from heronbridge.runtime.plan.codec import topology_from_proto
    from heronbridge.runtime.statemgr import TOPOLOGIES

    topology = plan(tmp_path, 6000, **{"test.interval": 0.0005})
    want = expected_counts(6000)

    def updating(parallelism):
        with ThreadPoolExecutor(1) as pool:
            future = pool.submit(update, state, "stateful", parallelism, reason="test")
            while not future.done():
                running.check()
                time.sleep(0.05)
            return future.result()

    def total():
        return sum(counts(tmp_path).values())

    running = run_topology(topology)
    with running:
        wait_until(lambda: total() > 2000, 60, "words counted", on_timeout=running.logs)
        up = updating({"count": 3})
        assert len(up.started_tasks) >= 3
        layout = TaskLayout.of(topology_from_proto(state.get(TOPOLOGIES, "stateful")))
        assert len(layout.component_tasks["count"]) == 3
        wait_until(lambda: total() > 8000, 60, "words counted after the update",
                   on_timeout=running.logs)
        updating({"count": 1})
        now = TaskLayout.of(topology_from_proto(state.get(TOPOLOGIES, "stateful")))
        (counter,) = now.component_tasks["count"]
        wait_until(lambda: counts(tmp_path, {counter}) == want, 90,
                   "exact counts after two updates", interval=0.2,
                   on_timeout=lambda: f"{counts(tmp_path, {counter})} != {want}\n"
                   + running.logs())


@pytest.mark.compat("config/topology.stateful.start.clean")
def test_submitted_again_it_goes_on_from_its_newest_checkpoint_unless_told_to_start_clean(
        run_topology, tmp_path):
    def run(lines, **extra):
        for stale in tmp_path.glob("counts-*.json"):
            stale.unlink()
        want = expected_counts(lines)
        with run_topology(plan(tmp_path, lines, **extra)) as running:
            wait_until(lambda: counts(tmp_path) == want, 60, f"exact counts of {lines} lines",
                       interval=0.2, on_timeout=running.logs)
            wait_until(lambda: "consistent" in master_log(running), 30, "a checkpoint")
            return master_log(running)

    def master_log(running):
        return (running.workdir / "container-0" / "logs" / "topology-master.log").read_text()

    def first_rollback(log):
        return next(line for line in log.splitlines() if "rolling back to" in line)

    assert "rolling back to empty state" in first_rollback(run(1000))
    # The spout goes on from line 1000 and the counts from what they were.
    assert "rolling back to empty state" not in first_rollback(run(2000))
    log = run(1000, **{"topology.stateful.start.clean": True})
    assert "rolling back to empty state" in first_rollback(log)
