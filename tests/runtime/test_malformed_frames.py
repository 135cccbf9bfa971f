"""A malformed frame costs only itself: the good frames of the same read are kept, and
the log names the peer that sent it, not the component that received it."""

from __future__ import annotations

import re
import socket

import msgspec
import pytest
from rt_components import KeySpout, RecordingBolt
from testkit import Running, read_jsonl, wait_until

from heronbridge.runtime import TopologyBuilder
from heronbridge.runtime.instance.connection import Connection, ConnectionLost
from heronbridge.runtime.plan import TaskLayout
from heronbridge.runtime.proto import control_pb2
from heronbridge.runtime.state import PHYSICAL_PLANS, TOPOLOGIES
from heronbridge.runtime.wire import auth, frames

GARBAGE = b"\xff\xff\xff\xff\x63\x00\x00\x00\x00"  # length 4 GiB, kind 99


def data(dest: int, src: int, seq: int) -> bytes:
    return frames.data_frame(dest, src, 0, msgspec.msgpack.encode([[["k", seq]]]))


def test_the_frames_before_a_malformed_header_are_handed_over():
    good = [data(2, 1, 1), frames.int_frame(frames.ACK, 0, [5, 6])]
    with pytest.raises(frames.BadFrame) as caught:
        frames.FrameAssembler().feed(b"".join(good) + GARBAGE + data(2, 1, 2))
    bad = caught.value
    assert [bytes(bad.data[s:e]) for _, _, s, e in bad.found] == good
    assert "kind 99" in str(bad)


def test_a_task_keeps_the_good_frames_then_leaves_as_one_that_lost_its_stream_manager():
    ours, theirs = socket.socketpair()
    conn = Connection(ours)
    theirs.sendall(data(2, 1, 1) + data(2, 1, 2) + GARBAGE)
    got, found = conn.poll(1.0)
    assert [kind for kind, *_ in found] == [frames.DATA, frames.DATA]
    with pytest.raises(ConnectionLost, match="stream manager sent a malformed frame"):
        conn.poll(0.1)
    conn.close()
    theirs.close()


def received(out, task):
    return [r["values"][1] for r in read_jsonl(out, f"received-record-{task}.jsonl").get(
        f"received-record-{task}", [])]


@pytest.mark.integration
def test_a_peer_sending_malformed_frames_is_named_and_its_good_frames_delivered(
        home, state, tmp_path):
    b = TopologyBuilder("malformed", {"test.out": str(tmp_path), "test.count": 5,
                                      "test.reliable": False})
    b.spout("keys", KeySpout)
    b.bolt("record", RecordingBolt, inputs=["keys"])
    plan = b.build()
    layout = TaskLayout.of(plan)
    spout, bolt = layout.component_tasks["keys"][0], layout.component_tasks["record"][0]
    with Running(plan, home, state) as running:
        wait_until(lambda: len(received(tmp_path, bolt)) == 5, 30, "the spout's tuples",
                   on_timeout=running.logs)
        [stmgr] = state.get(PHYSICAL_PLANS, plan.name).stmgrs
        tid = state.get(TOPOLOGIES, plan.name).id
        # A stream manager with the topology's secret (a peer with a bug): an ack frame that
        # is not a whole number of pairs, a data frame the task cannot decode, two good
        # ones, then a header that breaks the framing.
        with socket.create_connection((stmgr.host, stmgr.data_port), 10) as sock:
            session = auth.dial_sync(sock, state.get_secret(plan.name), auth.STMGR,
                                     auth.Identity.tcp(tid, stmgr.id, stmgr.host,
                                                       stmgr.data_port))
            odd_ack = frames.HEADER.pack(frames.HEADER_SIZE - 4 + 9, frames.ACK, 0) + bytes(9)
            undecodable = frames.data_frame(bolt, spout, 0, b"\xc1\xc1")
            sock.sendall(session.sealer.seal_bytes(frames.control_frame(
                control_pb2.StreamManagerHello(topology_id=tid, stmgr_id="stmgr-9"))
                + odd_ack + undecodable + data(bolt, spout, 100) + data(bolt, spout, 101)
                + GARBAGE))
            assert sock.recv(100) == b""  # closed after the bad header
        wait_until(lambda: received(tmp_path, bolt)[-2:] == [100, 101], 30,
                   "the good frames to reach the task", on_timeout=running.logs)
        counts = wait_until(lambda: running.metrics()["record"]["execute-count"] >= 7
                            and running.metrics()["record"], 30, "the bolt's metrics")
        assert counts.get("error-count", 0) == 0
        logs = running.logs()
    sm_log = re.search(r"stmgr-0: stream manager stmgr-9 \(127\.0\.0\.1:\d+\) sent a malformed "
                       r"frame \(.*kind 99.*\); closing its connection, after taking the 5 "
                       r"whole frames before it", logs)
    assert sm_log, logs
    assert re.search(r"stmgr-0: stream manager stmgr-9 \(127\.0\.0\.1:\d+\) sent a malformed "
                     r"ack frame \(ValueError: .*\); skipped it and kept the others", logs), logs
    assert re.search(rf"task {bolt}: skipped a malformed data frame \(from task {spout}, "
                     r"stream #\d+\) from the stream manager", logs), logs
    task_log = (running.workdir / "container-0" / "logs" / f"task-{bolt}-record.log").read_text()
    assert "=== restart" not in task_log  # the task went on
