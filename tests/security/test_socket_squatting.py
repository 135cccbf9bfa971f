"""Hole 6: the Unix sockets of a container are files in a folder only the topology's
owner can enter, so another user can neither connect to them nor take their names, not
even while a stream manager restarts; a name that is taken is reported as such."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import stat

import pytest
from rt_components import RecordingBolt, ReplayingSpout
from test_attacks import task_sockets
from testkit import Running, read_jsonl, wait_until

from heronbridge.runtime import TopologyBuilder
from heronbridge.runtime.errors import SchedulerError
from heronbridge.runtime.state import PHYSICAL_PLANS, TOPOLOGIES
from heronbridge.runtime.wire.aio import listen_unix

COUNT = 600

SQUAT = r'''
import json, socket, sys, time
paths, seconds = sys.argv[1:-1], float(sys.argv[-1])
report = {"connected": 0, "bound": 0, "errors": set()}
end = time.monotonic() + seconds
while time.monotonic() < end:
    for path in paths:
        for what in ("connect", "bind"):
            s = socket.socket(socket.AF_UNIX)
            try:
                getattr(s, what)(path)
                report["connected" if what == "connect" else "bound"] += 1
            except OSError as exc:
                report["errors"].add(type(exc).__name__)
            finally:
                s.close()
    time.sleep(0.01)
report["errors"] = sorted(report["errors"])
print(json.dumps(report))
'''


def acked(out):
    return {r["seq"] for rs in read_jsonl(out, "spout-*.jsonl").values() for r in rs
            if r["event"] == "ack"}


@pytest.mark.integration
def test_nobody_else_can_reach_or_squat_a_containers_sockets(home, state, tmp_path,
                                                              attacker):
    b = TopologyBuilder("squatted", {"topology.reliability.mode": "ATLEAST_ONCE",
                                     "test.out": str(tmp_path), "test.count": COUNT,
                                     "test.interval": 0.005,
                                     "heronbridge.restart.backoff.secs": 1.0})
    b.spout("a-source", ReplayingSpout)
    b.bolt("record", RecordingBolt, inputs=["a-source"])
    with Running(b.build(), home, state) as running:
        wait_until(lambda: acked(tmp_path), 60, "the first acks", on_timeout=running.logs)
        stmgr_path, metrics_path = task_sockets(state.get(TOPOLOGIES, "squatted").id, 0)
        folder = os.path.dirname(stmgr_path)
        info = os.lstat(folder)
        assert stat.S_ISDIR(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o700
        assert info.st_uid == os.getuid() and os.path.dirname(metrics_path) == folder
        [sm] = state.get(PHYSICAL_PLANS, "squatted").stmgrs
        os.kill(sm.pid, signal.SIGKILL)  # its socket's name is free until it is back
        report = attacker.run(SQUAT, stmgr_path, metrics_path, 3.0)
        wait_until(lambda: acked(tmp_path) >= set(range(COUNT)), 90, "every id acked",
                   on_timeout=running.logs)
    assert report == {"connected": 0, "bound": 0, "errors": ["PermissionError"]}
    assert not os.path.exists(folder)  # the executor leaves nothing behind


def test_a_name_in_use_is_reported_as_such():
    name = f"\0heronbridge-test-squat-{os.getpid()}"
    squatter = socket.socket(socket.AF_UNIX)
    squatter.bind(name)

    async def main():
        await listen_unix(asyncio.Protocol, name, "stmgr-0")

    with pytest.raises(SchedulerError, match="stmgr-0: cannot listen on the Unix socket "
                                             ".*another process holds it"):
        asyncio.run(main())
    squatter.close()
