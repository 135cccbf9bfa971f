"""A hostile local user attacks a running topology: raw clients, without the topology's
secret, send a data frame, a forged ack, a forged backpressure notice, register as a
task and register as a stream manager, at each listener that would take them. Each is
refused and logged, and the topology's counts equal those of an undisturbed run."""

from __future__ import annotations

import re
import socket

import msgspec
import psutil
import pytest
from rt_components import KeySpout, RecordingBolt
from testkit import Running, read_jsonl, wait_until

from heronbridge.runtime import Grouping, TopologyBuilder
from heronbridge.runtime.plan import TaskLayout
from heronbridge.runtime.plan.packing import round_robin
from heronbridge.runtime.proto import control_pb2, plans_pb2
from heronbridge.runtime.statemgr import PHYSICAL_PLANS, TMASTERS, TOPOLOGIES
from heronbridge.runtime.wire import frames

pytestmark = pytest.mark.integration

COUNT = 600


def plan(name, out):
    b = TopologyBuilder(name, {
        "topology.reliability.mode": "ATLEAST_ONCE", "topology.stmgrs": 2,
        "test.out": str(out), "test.count": COUNT, "test.interval": 0.005})
    b.spout("keys", KeySpout)
    b.bolt("record", RecordingBolt, inputs={"keys": Grouping.by_fields("key")}, par=2)
    return b.build()


def outcome(out):
    """What the spout heard and what each bolt task received."""
    spout = [r for rs in read_jsonl(out, "spout-*.jsonl").values() for r in rs]
    received = {name: sorted(r["values"][1] for r in rs)
                for name, rs in read_jsonl(out, "received-*.jsonl").items()}
    return ({r["seq"] for r in spout if r["event"] == "ack"},
            [r["seq"] for r in spout if r["event"] == "fail"], received)


def finished(out):
    acked, _, received = outcome(out)
    return len(acked) == COUNT and sum(map(len, received.values())) >= COUNT


def task_sockets(tid, container):
    """(stream manager, metrics manager) sockets of a container, from a task's command
    line (the container's socket folder is its executor's, made afresh)."""
    for proc in psutil.process_iter(["cmdline"]):
        cmd = proc.info["cmdline"] or []
        if "heronbridge.runtime.instance" in cmd and tid in cmd \
                and cmd[cmd.index("--container") + 1] == str(container):
            return cmd[cmd.index("--stmgr") + 1], cmd[cmd.index("--metrics") + 1]
    msg = f"no task of container {container} running"
    raise AssertionError(msg)


def attack(address, payload: bytes) -> bytes:
    """Connect, send `payload` as an attacker would, and return what came back before the
    listener closed the connection."""
    family = socket.AF_UNIX if isinstance(address, str) else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.settimeout(10)
        sock.connect(address)
        sock.sendall(payload)
        got = b""
        try:
            while chunk := sock.recv(4096):
                got += chunk
        except ConnectionResetError:
            pass
        return got


def test_unauthenticated_clients_are_refused_and_change_nothing(home, state, tmp_path):
    clean, attacked = tmp_path / "clean", tmp_path / "attacked"
    with Running(plan("undisturbed", clean), home, state) as running:
        wait_until(lambda: finished(clean), 60, "the undisturbed run", on_timeout=running.logs)

    target = plan("attacked", attacked)
    layout = TaskLayout.of(target)
    spout_task = layout.component_tasks["keys"][0]
    bolt_task = layout.component_tasks["record"][0]
    bolt_container = round_robin(target, 2).container_of(bolt_task)
    with Running(target, home, state) as running:
        wait_until(lambda: outcome(attacked)[0], 30, "the first acks", on_timeout=running.logs)
        tid = state.get(TOPOLOGIES, "attacked").id
        pplan = wait_until(lambda: state.get(PHYSICAL_PLANS, "attacked"), 30,
                           "the physical plan in the state")  # written off the master's loop
        peers = {s.container: (s.host, s.data_port) for s in pplan.stmgrs}
        master = state.get(TMASTERS, "attacked")
        master_at = (master.host, master.server_port)
        sockets = {c: task_sockets(tid, c) for c in (0, bolt_container)}
        root = (spout_task << frames.ROOT_TASK_SHIFT) | 1
        data = frames.data_frame(bolt_task, spout_task, 0,
                                 msgspec.msgpack.encode([[["k0", 10**6]]]))
        # what: (where, the listener's name in its log, the frame)
        attacks = {
            "data frame to a peer port": (peers[1], "stmgr-1 (peers)", data),
            "data frame to a task socket": (sockets[0][0], "stmgr-0 (tasks)", data),
            "forged ack": (peers[0], "stmgr-0 (peers)",
                           frames.int_frame(frames.ACK, 0, [root, 0])),
            "forged ack from a task": (sockets[0][0], "stmgr-0 (tasks)",
                                       frames.int_frame(frames.ACK, 0, [root, 0])),
            "forged backpressure": (peers[0], "stmgr-0 (peers)", frames.control_frame(
                control_pb2.BackPressureNotice(stmgr_id="stmgr-1", active=True))),
            "registers as a task": (
                sockets[bolt_container][0], f"stmgr-{bolt_container} (tasks)",
                frames.control_frame(control_pb2.RegisterInstanceRequest(
                    topology_id=tid, task_id=bolt_task))),
            "registers as a stream manager": (master_at, "topology master", frames.control_frame(
                control_pb2.RegisterStreamManagerRequest(
                    topology_id=tid, task_ids=[bolt_task], stmgr=plans_pb2.StreamManagerInfo(
                        id="stmgr-1", container=1, host="127.0.0.1", data_port=1)))),
            "fake metrics": (sockets[0][1], "metrics manager 0", frames.control_frame(
                control_pb2.MetricsPublish(tasks=[control_pb2.TaskMetrics(
                    component="keys", task_id=spout_task, counters={"ack-count": 10**9})]))),
        }
        for what, (address, _, payload) in attacks.items():
            assert attack(address, payload) == b"", f"{what}: the listener answered"
        secret = state.get_secret("attacked").hex()
        assert not [p.pid for p in psutil.process_iter(["cmdline"])
                    if secret in " ".join(p.info["cmdline"] or [])]  # never on a command line
        wait_until(lambda: finished(attacked), 60, "the attacked run to finish",
                   on_timeout=running.logs)
        # Counters are cumulative: the fake sample's 10**9 would have shown at once.
        wait_until(lambda: running.metrics()["keys"]["ack-count"] == COUNT, 30,
                   "the spout's metrics", on_timeout=lambda: str(running.metrics()))
        logs = running.logs()

    assert outcome(attacked) == outcome(clean)  # same acks, no fails, same tuples per task
    refused = re.findall(r"(\S+ \(\w+\)|topology master|metrics manager \d): refused a "
                         r"connection from .*: expected a handshake", logs)
    assert sorted(refused) == sorted(name for _, name, _ in attacks.values()), logs
