"""The stream manager's session with its master heartbeats once every
heronbridge.heartbeat.interval.secs while its link is up, whatever else it sends."""

from __future__ import annotations

import asyncio

import pytest

from heronbridge.runtime.config import TopologyConfig
from heronbridge.runtime.proto import control_pb2, plans_pb2
from heronbridge.runtime.stream_manager import master_session
from heronbridge.runtime.stream_manager.master_session import MasterSession, Status


class Link:
    def __init__(self) -> None:
        self.sent: list = []
        self.closed = asyncio.get_running_loop().create_future()
        self.transport = None

    def send(self, message) -> None:
        self.sent.append(message)


class Master:  # the master's location, which never moves here
    async def changed(self, timeout=None):
        await asyncio.Event().wait()


@pytest.mark.compat("config/heronbridge.heartbeat.interval.secs")
def test_the_session_heartbeats_every_interval_the_config_sets(monkeypatch):
    conf = TopologyConfig.read({"heronbridge.heartbeat.interval.secs": "0.25"}, "t")
    waits: list[float] = []
    real_wait = asyncio.wait

    async def run() -> list:
        link = Link()

        async def wait(futures, timeout):  # the session's pause between heartbeats
            waits.append(timeout)
            if len(waits) == 3:
                link.closed.set_result(None)
            return await real_wait(futures, timeout=0)

        monkeypatch.setattr(master_session.asyncio, "wait", wait)
        session = MasterSession(
            "stmgr-0", "t", "t-1", None, b"", None, conf.heartbeat_interval_secs,
            control_pb2.RegisterStreamManagerRequest, lambda: Status(True, "p", False, 0),
            lambda message: None)
        location = plans_pb2.TopologyMasterLocation(host="127.0.0.1", server_port=1)
        await session._registered(link, location, Master())
        return link.sent

    sent = asyncio.run(run())
    assert isinstance(sent[0], control_pb2.RegisterStreamManagerRequest)
    beats = sent[1:]
    # Each pause is the interval, and a heartbeat goes before each, though nothing changed.
    assert waits == [0.25] * 3
    assert len(beats) == 3 and all(isinstance(b, control_pb2.StreamManagerHeartbeat)
                                   and b.stmgr_id == "stmgr-0" and b.instances_ready
                                   for b in beats)
