"""Containers on several hosts (simulated by loopback addresses): each publishes the
address it really listens on, and when a stream manager comes back on a new port its
peers follow it, so no at-least-once id is lost."""

from __future__ import annotations

import json
import os
import signal
import socket
import time

import pytest
from rt_components import RecordingBolt, ReplayingSpout
from testkit import Running, read_jsonl, wait_until

from heronbridge.runtime import Grouping, TopologyBuilder, control
from heronbridge.runtime.errors import SchedulerError
from heronbridge.runtime.plan import TaskLayout
from heronbridge.runtime.plan.packing import round_robin
from heronbridge.runtime.proto import control_pb2
from heronbridge.runtime.statemgr import PHYSICAL_PLANS, TOPOLOGIES
from heronbridge.runtime.wire import frames

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


def a_task_on_another_host_is_profiled_there(state, name):
    """Stacks, memory and a flame graph of a task on 127.0.0.3, from its container's stream
    manager, over a link that proved the secret and may ask for nothing else."""
    pplan = state.get(PHYSICAL_PLANS, name)
    stmgr = next(s for s in pplan.stmgrs if s.host == "127.0.0.3")
    task = next(i.task_id for i in pplan.instances if i.stmgr_id == stmgr.id)
    stacks = control.profile(state, name, task, "stacks")
    assert stacks.status.ok, stacks.status.message
    argv = open(f"/proc/{stacks.pid}/cmdline", "rb").read().split(b"\0")
    assert argv[argv.index(b"--task") + 1] == str(task).encode()  # that task's process
    assert f"Process {stacks.pid}".encode() in stacks.body
    assert b"heronbridge/runtime/instance" in stacks.body
    memory = control.profile(state, name, task, "memory")
    assert memory.pid == stacks.pid and json.loads(memory.body)["VmRSS"] > 0
    flame = control.profile(state, name, task, "flame", seconds=1)
    assert flame.status.ok and b"<svg" in flame.body, flame.status.message
    with pytest.raises(SchedulerError, match="has no task 99"):
        control.profile(state, name, 99, "stacks")
    topology = state.get(TOPOLOGIES, name)
    with pytest.raises(SchedulerError, match="cannot reach"):  # without the secret
        control.Session(name, topology, b"x" * 32, stmgr.id, stmgr.host, stmgr.data_port, 5,
                        "its stream manager")
    with control.Session(name, topology, state.get_secret(name), stmgr.id, stmgr.host,
                         stmgr.data_port, 5, "its stream manager") as session, \
            pytest.raises(SchedulerError, match="closed"):
        session.ask(control_pb2.ControllerRequest(metrics=control_pb2.MetricsQuery()),
                    time.monotonic() + 10)


def a_task_log_on_another_host_is_read_there(state, name, workdir):
    """A task's log on 127.0.0.3, read by its container's stream manager from an offset and
    then on from where it ended, and its sampled tuples; a task of another container is
    refused, and a dialer without the secret gets nothing."""
    pplan = state.get(PHYSICAL_PLANS, name)
    stmgr = next(s for s in pplan.stmgrs if s.host == "127.0.0.3")
    mine = next(i for i in pplan.instances if i.stmgr_id == stmgr.id)
    other = next(i.task_id for i in pplan.instances if i.stmgr_id != stmgr.id)
    path = (workdir / f"container-{stmgr.container}" / "logs" /
            f"task-{mine.task_id}-{mine.component}.log")
    on_disk = path.read_bytes()
    with control.stmgr_session(state, name, stmgr) as session:
        [last] = control.read_logs(session, {mine.task_id: -1}, 100)
        assert not last.missing and last.task_id == mine.task_id
        assert (last.offset, len(last.data)) == (max(0, len(on_disk) - 100), 100)
        assert last.data == on_disk[last.offset:last.offset + 100]
        [whole] = control.read_logs(session, {mine.task_id: 0}, 1 << 20)
        assert whole.offset == 0 and whole.data.startswith(on_disk)
        with pytest.raises(SchedulerError, match=rf"container {stmgr.container}.*\[{other}\]"):
            control.read_logs(session, {mine.task_id: 0, other: 0}, 100)
        [again] = control.read_logs(session, {mine.task_id: len(whole.data)}, 100)
        assert again.offset == len(whole.data)  # the session outlives a refused request
        events = path.with_name(f"events-{mine.task_id}-{mine.component}.jsonl")
        [none] = control.read_logs(session, {mine.task_id: 0}, 100,
                                   file=control_pb2.SAMPLED_EVENTS)
        assert none.missing and not events.exists()  # nothing sampled
        events.write_bytes(b'{"ts": 1}\n')
        [sampled] = control.read_logs(session, {mine.task_id: 0}, 100,
                                      file=control_pb2.SAMPLED_EVENTS)
        assert (sampled.missing, sampled.data) == (False, b'{"ts": 1}\n')
    request = frames.control_frame(control_pb2.LogRequest(
        cursors=[control_pb2.LogCursor(task_id=mine.task_id)]))
    with socket.create_connection((stmgr.host, stmgr.data_port), 10) as sock:
        sock.settimeout(10)
        sock.sendall(request)
        assert sock.recv(1 << 16) == b""  # closed before anything is read


def test_a_restarted_stream_manager_is_followed_by_its_peers(home, state, tmp_path):
    running = Running(spread_plan("hosts", tmp_path), home, state)
    running.hosts = HOSTS  # each container's executor gets its host's address
    with running:
        a_task_on_another_host_is_profiled_there(state, running.plan.name)
        a_task_log_on_another_host_is_read_there(state, running.plan.name, running.workdir)
        kill_a_stream_manager_and_check_no_id_is_lost(running, state, tmp_path)
