"""A task process that dies is restarted, its log kept, and the topology runs on."""

from __future__ import annotations

import os
import signal

import pytest
from rt_components import KeySpout, RecordingBolt
from testkit import read_jsonl, wait_until

from heronbridge.runtime import TopologyBuilder
from heronbridge.runtime.plan import TaskLayout

pytestmark = pytest.mark.integration


def acks(out):
    return sum(r["event"] == "ack" for rs in read_jsonl(out, "spout-*.jsonl").values()
               for r in rs)


def pids(out, task):
    return [r["pid"] for r in read_jsonl(out, f"received-record-{task}.jsonl").get(
        f"received-record-{task}", [])]


def test_a_killed_task_comes_back_and_the_topology_keeps_running(run_topology, tmp_path):
    b = TopologyBuilder("restarts", {
        "topology.reliability.mode": "ATLEAST_ONCE", "topology.message.timeout.secs": 3,
        "test.out": str(tmp_path), "test.count": 10**9, "test.interval": 0.002,
        "heronbridge.restart.backoff.secs": 0.2})
    b.spout("keys", KeySpout)
    b.bolt("record", RecordingBolt, inputs=["keys"], par=2)
    plan = b.build()
    with run_topology(plan) as running:
        victim, other = TaskLayout.of(plan).component_tasks["record"]
        first = wait_until(lambda: pids(tmp_path, victim), 30, "the victim to receive tuples",
                           on_timeout=running.logs)[0]
        other_pid = wait_until(lambda: pids(tmp_path, other), 30, "the other task")[0]
        os.kill(first, signal.SIGKILL)
        wait_until(lambda: any(p != first for p in pids(tmp_path, victim)), 30,
                   "the restarted task to receive tuples", on_timeout=running.logs)
        before = acks(tmp_path)
        wait_until(lambda: acks(tmp_path) > before + 200, 30, "acks to keep coming")
        log = (running.workdir / "container-0" / "logs" / f"task-{victim}-record.log").read_text()
    assert "started (incarnation 0" in log and "=== restart 1" in log
    assert "started (incarnation 1" in log
    assert set(pids(tmp_path, other)) == {other_pid}  # the other task never stopped
