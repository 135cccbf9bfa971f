"""Containers on several hosts (simulated by loopback addresses): each publishes the
address it really listens on, and when a stream manager comes back on a new port its
peers follow it, so no at-least-once id is lost."""

from __future__ import annotations

import os
import signal

import pytest
from rt_components import RecordingBolt, ReplayingSpout
from testkit import Running, read_jsonl, wait_until

from heronbridge.runtime import Grouping, TopologyBuilder
from heronbridge.runtime.plan import TaskLayout
from heronbridge.runtime.plan.packing import round_robin
from heronbridge.runtime.statemgr import PHYSICAL_PLANS

pytestmark = pytest.mark.integration

HOSTS = {0: "127.0.0.1", 1: "127.0.0.2", 2: "127.0.0.3"}
COUNT = 1500


def spread_plan(name, out, **conf):
    """A spout in container 0 and five recording bolts over three containers."""
    b = TopologyBuilder(name, {
        "topology.reliability.mode": "ATLEAST_ONCE", "topology.message.timeout.secs": 3,
        "topology.stmgrs": 3, "test.out": str(out), "test.count": COUNT,
        "test.interval": 0.004, "heronbridge.restart.backoff.secs": 0.2, **conf})
    b.spout("a-source", ReplayingSpout)  # task 1: container 0
    b.bolt("record", RecordingBolt, inputs={"a-source": Grouping.by_fields("key")}, par=5)
    return b.build()


def acked(out):
    return {r["seq"] for rs in read_jsonl(out, "spout-*.jsonl").values() for r in rs
            if r["event"] == "ack"}


def receivers(out, tasks):
    """{pid: tuples received} over the given tasks."""
    pids: dict[int, int] = {}
    for task in tasks:
        for r in read_jsonl(out, f"received-record-{task}.jsonl").get(
                f"received-record-{task}", []):
            pids[r["pid"]] = pids.get(r["pid"], 0) + 1
    return pids


def stmgrs(state, name):
    pplan = state.get(PHYSICAL_PLANS, name)
    return {s.container: s for s in pplan.stmgrs} if pplan is not None else {}


def kill_a_stream_manager_and_check_no_id_is_lost(running, state, out, container=1):
    """SIGKILL one container's stream manager mid-run: it comes back on a new port, its
    peers follow it there, its tasks receive tuples again and every id ends acked."""
    plan = running.plan
    tasks = [i.task_id for i in round_robin(plan, 3).containers[container].instances]
    assert set(TaskLayout.of(plan).component_tasks["record"]) >= set(tasks)
    before = stmgrs(state, plan.name)
    assert {c: s.host for c, s in before.items()} == HOSTS  # each where it really listens
    wait_until(lambda: sum(receivers(out, tasks).values()) > 50, 30,
               "the container's tasks to receive tuples", on_timeout=running.logs)
    old_pids = set(receivers(out, tasks))
    os.kill(before[container].pid, signal.SIGKILL)
    moved = wait_until(lambda: stmgrs(state, plan.name)[container].pid != before[container].pid
                       and stmgrs(state, plan.name)[container], 30,
                       "the stream manager to come back", on_timeout=running.logs)
    assert moved.host == HOSTS[container] and moved.data_port != before[container].data_port
    wait_until(lambda: sum(n for p, n in receivers(out, tasks).items() if p not in old_pids)
               > 20, 60, "tuples to reach the container's restarted tasks",
               on_timeout=running.logs)
    wait_until(lambda: acked(out) == set(range(COUNT)), 90, "every id to be acked",
               on_timeout=lambda: f"missing {sorted(set(range(COUNT)) - acked(out))[:20]}\n"
                                  + running.logs())


def test_a_restarted_stream_manager_is_followed_by_its_peers(home, state, tmp_path):
    running = Running(spread_plan("hosts", tmp_path), home, state)
    running.hosts = HOSTS  # each container's executor gets its host's address
    with running:
        kill_a_stream_manager_and_check_no_id_is_lost(running, state, tmp_path)
