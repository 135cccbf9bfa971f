"""Hole 1: a stream manager dies; its peers redial its old port until the new plan comes.
An unprivileged local user binds that port and relays each handshake to a live stream
manager, as it is and with the identity rewritten to the live one's, then sends forged
frames (a tuple, an ack, a backpressure notice) down the relayed link. No relayed
handshake completes, nothing the attacker sends is taken, and every id is processed."""

from __future__ import annotations

import os
import re
import signal

import msgspec
import pytest
from rt_components import RecordingBolt, ReplayingSpout
from testkit import Running, read_jsonl, wait_until

from heronbridge.runtime import Grouping, TopologyBuilder
from heronbridge.runtime.plan import TaskLayout
from heronbridge.runtime.proto import control_pb2
from heronbridge.runtime.state import PHYSICAL_PLANS, TOPOLOGIES
from heronbridge.runtime.wire import auth, frames

pytestmark = pytest.mark.integration

COUNT = 1500
FORGED = 10**6

RELAY = r'''
import json, select, socket, sys, time
port, upstreams, live_identities, inject, seconds = (int(sys.argv[1]), json.loads(sys.argv[2]),
    [bytes.fromhex(i) for i in json.loads(sys.argv[3])], bytes.fromhex(sys.argv[4]),
    float(sys.argv[5]))
server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
deadline = time.monotonic() + 5
while True:
    try:
        server.bind(("127.0.0.1", port)); break
    except OSError:
        if time.monotonic() > deadline: raise
        time.sleep(0.005)
server.listen(64)
server.settimeout(0.2)
report = {"bound": port, "connections": 0, "ok_seen": 0, "closed_by_live": 0,
          "closed_by_dialer": 0}
end = time.monotonic() + seconds
while time.monotonic() < end:
    try:
        down, _ = server.accept()
    except socket.timeout:
        continue
    n = report["connections"]
    report["connections"] += 1
    up = socket.create_connection(("127.0.0.1", upstreams[n % len(upstreams)]), 5)
    rewrite = n % 2 == 1
    pairs, handshake = {down: up, up: down}, True
    stop = time.monotonic() + 3
    first = True
    while time.monotonic() < stop:
        ready, _, _ = select.select(list(pairs), [], [], 0.1)
        done = False
        for s in ready:
            try:
                data = s.recv(65536)
            except OSError:
                data = b""
            if not data:
                report["closed_by_live" if s is up else "closed_by_dialer"] += 1
                done = True; break
            if s is down and first and rewrite:  # claim to want the live listener
                at = 4 + 1 + data[4] + 32
                data = data[:at] + len(live_identities[n % len(upstreams)]).to_bytes(2,
                    "little") + live_identities[n % len(upstreams)]
            if s is down: first = False
            if s is up and data[-1:] == b"\x01" and len(data) <= 2: report["ok_seen"] += 1
            pairs[s].sendall(data)
        if done: break
        if time.monotonic() > stop - 2.5:
            try: up.sendall(inject)  # after the handshake, forged frames
            except OSError: pass
    down.close(); up.close()
print(json.dumps(report))
'''


def plan(out):
    b = TopologyBuilder("relayed", {
        "topology.reliability.mode": "ATLEAST_ONCE", "topology.stmgrs": 3,
        "test.out": str(out), "test.count": COUNT, "test.interval": 0.004,
        "heronbridge.restart.backoff.secs": 2.0})
    b.spout("a-source", ReplayingSpout)
    b.bolt("record", RecordingBolt, inputs={"a-source": Grouping.by_fields("key")}, par=3)
    return b.build()


def acked(out):
    return {r["seq"] for rs in read_jsonl(out, "spout-*.jsonl").values() for r in rs
            if r["event"] == "ack"}


def received(out):
    return [r["values"][1] for rs in read_jsonl(out, "received-*.jsonl").values() for r in rs]


def test_a_relayed_handshake_gains_nothing(home, state, tmp_path, attacker):
    target = plan(tmp_path)
    layout = TaskLayout.of(target)
    spout = layout.component_tasks["a-source"][0]
    bolts = layout.component_tasks["record"]
    with Running(target, home, state) as running:
        wait_until(lambda: len(acked(tmp_path)) > 100, 60, "the first acks",
                   on_timeout=running.logs)
        tid = state.get(TOPOLOGIES, "relayed").id
        stmgrs = {s.id: s for s in state.get(PHYSICAL_PLANS, "relayed").stmgrs}
        victim, live = stmgrs["stmgr-1"], [stmgrs["stmgr-0"], stmgrs["stmgr-2"]]
        # What the attacker can learn without the secret: ids on tasks' command lines,
        # ports in /proc/net/tcp.
        identities = [auth.Identity.tcp(tid, s.id, s.host, s.data_port).encode().hex()
                      for s in live]
        inject = b"".join((
            frames.control_frame(control_pb2.StreamManagerHello(topology_id=tid,
                                                                stmgr_id="stmgr-1")),
            frames.data_frame(bolts[0], spout, 0, msgspec.msgpack.encode([[["k0", FORGED]]])),
            frames.int_frame(frames.ACK, 0, [(spout << frames.ROOT_TASK_SHIFT) | 1, 0]),
            frames.control_frame(control_pb2.BackPressureNotice(stmgr_id="stmgr-1",
                                                                active=True)))).hex()
        os.kill(victim.pid, signal.SIGKILL)
        report = attacker.run(
            RELAY, victim.data_port, f"[{live[0].data_port}, {live[1].data_port}]",
            "[" + ", ".join(f'"{i}"' for i in identities) + "]", inject, 8, timeout=60)
        wait_until(lambda: acked(tmp_path) >= set(range(COUNT)), 120, "every id acked",
                   on_timeout=running.logs)
        logs = running.logs()
    assert report["bound"] == victim.data_port
    assert report["connections"] >= 2, (report, logs)  # both kinds of relay were tried
    assert report["ok_seen"] == 0, report  # no live listener accepted a relayed proof
    # Each relayed handshake ended: the live listener hung up on the hello as it was, the
    # redialling peer on the proof the live listener made for its rewritten copy.
    assert report["closed_by_live"] + report["closed_by_dialer"] == report["connections"]
    assert report["closed_by_live"] and report["closed_by_dialer"], report
    assert FORGED not in received(tmp_path)
    # The live listener refuses a hello meant for the dead stmgr-1 ...
    assert re.search(r"stmgr-[02] \(peers\): refused a connection from 127\.0\.0\.1:\d+: "
                     r"expected a dialer of stmgr-[02] .*received one for stmgr-1", logs), logs
    # ... and the redialling peer refuses the live listener's proof, made for another.
    assert re.search(r"peer stmgr-1 at 127\.0\.0\.1:\d+: the listener did not prove the "
                     r"topology's secret for stmgr-1", logs), logs
