"""A task process that dies is restarted, its log kept, and the topology runs on."""

from __future__ import annotations

import json
import os
import signal
import time

import pytest
from rt_components import KeySpout, RecordingBolt
from testkit import read_jsonl, wait_until

from heronbridge.runtime import TopologyBuilder, control, procfs
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


def victim(running, task: int, cmd: tuple[str, ...]) -> bool:
    """The topology's master, its stream manager, or the task."""
    kind = procfs.kind_of(cmd)
    if kind in ("topology master", "stream manager"):
        return any(running.statemgr.uri in c for c in cmd) and running.name in cmd
    return kind == "task" and running.topology_id in cmd and \
        cmd[cmd.index("--task") + 1] == str(task)


def test_a_restarted_master_keeps_sampling_for_the_processes_that_restart_after_it(
        run_topology, tmp_path):
    """The master keeps the sampling in the state manager: killed together with the
    stream manager and the spout's task, the master comes back with it and the new stream
    manager and task hear it again."""
    b = TopologyBuilder("sampled-restarts", {
        "topology.reliability.mode": "ATLEAST_ONCE", "test.out": str(tmp_path),
        "test.count": 10**9, "test.interval": 0.005, "heronbridge.restart.backoff.secs": 0.2,
        "heronbridge.metrics.interval.secs": 0.2})
    b.spout("keys", KeySpout)
    b.bolt("record", RecordingBolt, inputs=["keys"])
    plan = b.build()
    with run_topology(plan) as running:
        control.set_sampling(running.statemgr, running.name, "keys", 50)
        task = TaskLayout.of(plan).component_tasks["keys"][0]
        events = running.workdir / "container-0" / "logs" / f"events-{task}-keys.jsonl"
        wait_until(lambda: events.exists() and events.stat().st_size, 30,
                   "the spout's first sampled tuples", on_timeout=running.logs)
        victims = [p.pid for p in procfs.every(with_cmd=True) if victim(running, task, p.cmd)]
        assert len(victims) == 3, victims
        killed = time.time() * 1000
        for pid in victims:
            os.kill(pid, signal.SIGKILL)

        def sampled_since() -> list:
            return [e for e in map(json.loads, events.read_text().splitlines())
                    if e["ts"] > killed + 1000]
        wait_until(sampled_since, 60, "tuples sampled after the restarts",
                   on_timeout=running.logs)
        assert dict(control.metrics(running.statemgr, running.name).sampling) == {"keys": 50}
