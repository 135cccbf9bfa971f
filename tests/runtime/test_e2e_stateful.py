"""EFFECTIVELY_ONCE: checkpoints complete, and a killed task rolls the whole topology
back to the newest one, so every word is counted exactly once."""

from __future__ import annotations

import json
import os
import signal

import pytest
from stateful_components import CountBolt, LineSpout, SplitBolt, expected_counts
from testkit import wait_until

from heronbridge.runtime import Grouping, TopologyBuilder
from heronbridge.runtime.plan import TaskLayout
from heronbridge.runtime.procfs import descendants
from heronbridge.runtime.state import PHYSICAL_PLANS, STATEFUL_CHECKPOINTS

pytestmark = pytest.mark.integration


def counts(out):
    total: dict[str, int] = {}
    for path in out.glob("counts-*.json"):
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


def test_a_killed_counter_rolls_back_and_every_word_counts_once(run_topology, state, tmp_path):
    topology = plan(tmp_path, 4000, **{"test.interval": 0.0005})
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
        master = running.logs()
    assert "rolling back to" in master and "task" in master
    rollbacks = master.count("topology 'stateful': rolling back to")
    assert rollbacks >= 2, master  # the start, then the kill
    # Every checkpoint folder left is a consistent one (the others were deleted).
    folders = sorted(p.name for p in (tmp_path / "checkpoints" / "stateful").iterdir())
    assert set(folders) >= set(consistent()[:1])



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
