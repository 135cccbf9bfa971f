"""A topology whose TCP links run over TLS with a CA the test makes: it runs across two
(simulated) hosts, the command line reaches its master, and a dialer that holds the secret
but no certificate from that CA is refused."""

from __future__ import annotations

import asyncio

import pytest
from rt_components import RecordingBolt, ReplayingSpout
from testkit import Running, read_jsonl, wait_until
from tlskit import CertificateAuthority

from heronbridge.runtime import Grouping, TopologyBuilder
from heronbridge.runtime.statemgr import PHYSICAL_PLANS, TMASTERS, TOPOLOGIES
from heronbridge.runtime.wire import auth
from heronbridge.runtime.wire.aio import FramedProtocol

pytestmark = pytest.mark.integration

COUNT = 300


def acked(out):
    return {r["seq"] for rs in read_jsonl(out, "spout-*.jsonl").values() for r in rs
            if r["event"] == "ack"}


@pytest.mark.compat("config/heronbridge.tls.cert", "config/heronbridge.tls.key",
                    "config/heronbridge.tls.ca")
def test_a_topology_over_mutual_tls(home, state, tmp_path):
    ca = CertificateAuthority(tmp_path / "ca")
    cert, key = ca.issue("127.0.0.1")
    b = TopologyBuilder("tls", {
        "topology.reliability.mode": "ATLEAST_ONCE", "topology.stmgrs": 2,
        "test.out": str(tmp_path), "test.count": COUNT, "test.interval": 0.002,
        "heronbridge.tls.cert": str(cert), "heronbridge.tls.key": str(key),
        "heronbridge.tls.ca": str(ca.path)})
    b.spout("a-source", ReplayingSpout)
    b.bolt("record", RecordingBolt, inputs={"a-source": Grouping.by_fields("key")}, par=2)
    running = Running(b.build(), home, state)
    running.hosts = {0: "127.0.0.1", 1: "127.0.0.2"}
    with running:  # the command line's own path (every task registered) is TLS already
        wait_until(lambda: acked(tmp_path) == set(range(COUNT)), 60, "every id acked",
                   on_timeout=running.logs)
        wait_until(lambda: running.metrics()["record"]["execute-count"] >= COUNT, 15,
                   "the metrics managers' samples through the master", on_timeout=running.logs)
        secret = state.get_secret("tls")
        peer = next(s for s in state.get(PHYSICAL_PLANS, "tls").stmgrs if s.container == 1)
        master = state.get(TMASTERS, "tls")
        tid = state.get(TOPOLOGIES, "tls").id
        for role, name, host, port in ((auth.STMGR, peer.id, peer.host, peer.data_port),
                                       (auth.CLI, "master", master.host, master.server_port)):
            with pytest.raises((auth.AuthError, ConnectionError)):
                asyncio.run(auth.dial(FramedProtocol, secret, role,
                                      auth.Identity.tcp(tid, name, host, port)))
