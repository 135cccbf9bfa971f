"""The ZooKeeper state manager against a real ZooKeeper server: Heron's layout, watches,
the master's location as an ephemeral primary lock, ephemerals back after a lost session,
digest ACLs, and a server that dies and comes back."""

from __future__ import annotations

import queue
import signal
import time

import pytest
from kazoo.client import KazooClient
from kazoo.exceptions import NoAuthError
from testkit import wait_until

from heronbridge.runtime.errors import StateManagerError
from heronbridge.runtime.proto import plans_pb2, topology_pb2
from heronbridge.runtime.statemgr import (
    PACKING_PLANS,
    SCHEDULERS,
    TMASTERS,
    TOPOLOGIES,
    NodeExistsError,
    open_statemgr,
)

pytestmark = pytest.mark.cluster

ME = "alice:alice-password"


@pytest.fixture
def root(request: pytest.FixtureRequest) -> str:
    return request.node.name.replace("[", "_").replace("]", "")


def raw(zookeeper, auth: str | None = None) -> KazooClient:
    client = KazooClient(zookeeper.hosts, auth_data=[("digest", auth)] if auth else None)
    client.start(10)
    return client


def location(port: int) -> plans_pb2.TopologyMasterLocation:
    return plans_pb2.TopologyMasterLocation(topology_name="wc", topology_id="wc-1",
                                            host="127.0.0.1", server_port=port)


def test_nodes_keep_herons_layout(zookeeper, root):
    state = open_statemgr(zookeeper.uri(root), ME)
    try:
        state.put(TOPOLOGIES, "wc", topology_pb2.Topology(id="wc-1", name="wc"))
        state.put(TOPOLOGIES, "wc", topology_pb2.Topology(id="wc-2", name="wc"))
        state.put(PACKING_PLANS, "wc", plans_pb2.PackingPlan(id="p"))
        state.claim(TMASTERS, "wc", location(9))
        state.put_secret("wc", b"s" * 32)
        assert state.get(TOPOLOGIES, "wc").id == "wc-2"
        assert state.names(TOPOLOGIES) == ["wc"] and state.get(SCHEDULERS, "wc") is None
        client = raw(zookeeper)
        try:
            assert sorted(client.get_children(f"/{root}")) == sorted(
                ["topologies", "packingplans", "pplans", "executionstate", "tmasters",
                 "schedulers", "secrets", "actions", "statefulcheckpoints", "checkpointkeys",
                 "sampling"])
            data, stat = client.get(f"/{root}/tmasters/wc")
            assert plans_pb2.TopologyMasterLocation.FromString(data).server_port == 9
            assert stat.ephemeralOwner != 0  # the master's location dies with its session
            assert client.get(f"/{root}/topologies/wc")[1].ephemeralOwner == 0
        finally:
            client.stop()
        state.clear("wc")
        assert state.names(TOPOLOGIES) == [] and state.get_secret("wc") is None
    finally:
        state.close()


def test_a_watch_sees_every_change_and_the_deletion(zookeeper, root):
    state = open_statemgr(zookeeper.uri(root), ME)
    seen: queue.Queue = queue.Queue()
    try:
        watch = state.watch(TOPOLOGIES, "wc", lambda m: seen.put(m and m.id))
        assert seen.get(timeout=10) is None  # at once, for a missing node
        state.put(TOPOLOGIES, "wc", topology_pb2.Topology(id="wc-1"))
        assert seen.get(timeout=10) == "wc-1"
        state.put(TOPOLOGIES, "wc", topology_pb2.Topology(id="wc-2"))
        assert seen.get(timeout=10) == "wc-2"
        state.delete(TOPOLOGIES, "wc")
        assert seen.get(timeout=10) is None
        watch.cancel()
        state.put(TOPOLOGIES, "wc", topology_pb2.Topology(id="wc-3"))
        assert state.wait_for(TOPOLOGIES, "wc", 10).id == "wc-3"
        with pytest.raises(queue.Empty):
            seen.get(timeout=1)
    finally:
        state.close()


def test_a_second_master_finds_another_primary_until_the_first_is_gone(zookeeper, root):
    first = open_statemgr(zookeeper.uri(root), ME)
    second = open_statemgr(zookeeper.uri(root), ME)
    try:
        first.claim(TMASTERS, "wc", location(1))
        first.claim(TMASTERS, "wc", location(2))  # its holder may update it
        with pytest.raises(NodeExistsError, match="another primary"):
            second.claim(TMASTERS, "wc", location(3))
        first.close()  # its session ends: the node goes with it, at once
        second.claim(TMASTERS, "wc", location(3))
        assert second.get(TMASTERS, "wc").server_port == 3
    finally:
        first.close()
        second.close()


def test_ephemeral_nodes_come_back_after_the_session_is_lost(zookeeper, root):
    state = open_statemgr(zookeeper.uri(root), ME)
    try:
        state.claim(TMASTERS, "wc", location(7))
        state.put(SCHEDULERS, "wc", plans_pb2.SchedulerLocation(topology_name="wc", pid=1))
        old_session = state.zk.client_id[0]
        # Expire the session as the server does: another client takes it over and ends it.
        thief = KazooClient(zookeeper.hosts, client_id=state.zk.client_id)
        thief.start(10)
        thief.stop()
        thief.close()
        wait_until(lambda: state.zk.client_id[0] != old_session, 30, "a new session")
        client = raw(zookeeper)
        try:
            def restored():
                data, stat = client.get(f"/{root}/tmasters/wc")
                return stat.ephemeralOwner == state.zk.client_id[0] and \
                    plans_pb2.TopologyMasterLocation.FromString(data).server_port == 7 and \
                    client.exists(f"/{root}/schedulers/wc").ephemeralOwner == stat.ephemeralOwner
            wait_until(restored, 30, "the ephemeral nodes re-created by the new session")
        finally:
            client.stop()
    finally:
        state.close()


def test_the_secret_is_the_owners_only_and_nodes_are_read_only_to_others(zookeeper, root):
    state = open_statemgr(zookeeper.uri(root), ME)
    try:
        state.put_secret("wc", b"k" * 32)
        state.put(TOPOLOGIES, "wc", topology_pb2.Topology(id="wc-1"))
        for auth in (None, "mallory:guess"):
            client = raw(zookeeper, auth)
            try:
                with pytest.raises(NoAuthError):
                    client.get(f"/{root}/secrets/wc")
                assert client.get(f"/{root}/topologies/wc")[0]  # readable ...
                with pytest.raises(NoAuthError):  # ... but nobody else may change it
                    client.set(f"/{root}/topologies/wc", b"evil")
                with pytest.raises(NoAuthError):
                    client.create(f"/{root}/topologies/evil", b"")
            finally:
                client.stop()
        # Another identity does not use a root that is not its own.
        with pytest.raises(StateManagerError, match=r"digest:alice:\S+ may change it; "
                                                    "refusing to use it"):
            open_statemgr(zookeeper.uri(root), "mallory:guess")
        assert state.get_secret("wc") == b"k" * 32
    finally:
        state.close()


def test_clients_ride_out_a_server_that_dies_and_comes_back(zookeeper, root):
    state = open_statemgr(zookeeper.uri(root), ME)
    seen: queue.Queue = queue.Queue()
    try:
        state.claim(TMASTERS, "wc", location(5))
        state.watch(TOPOLOGIES, "wc", lambda m: seen.put(m and m.id))
        assert seen.get(timeout=10) is None
        zookeeper.stop(signal.SIGKILL)
        zookeeper.start()
        state.put(TOPOLOGIES, "wc", topology_pb2.Topology(id="after"))  # retried until back
        wait_until(lambda: seen.get(timeout=1) == "after", 30, "the watch to fire again")
        assert state.get(TMASTERS, "wc").server_port == 5  # the session survived
    finally:
        state.close()


def test_a_call_while_the_server_is_down_ends_within_its_patience_or_hurry(zookeeper, root):
    """kazoo's own calls wait for the connection to come back, however long; ours give up
    at their deadline, naming the node and how long the connection has been down."""
    state = open_statemgr(zookeeper.uri(root), ME)
    try:
        state.put(TOPOLOGIES, "wc", topology_pb2.Topology(id="before"))
        assert state.unreachable_secs() == 0.0
        zookeeper.stop(signal.SIGKILL)
        wait_until(lambda: state.unreachable_secs() > 0, 10, "the client to notice")
        state.patience = 2.0
        began = time.monotonic()
        with pytest.raises(StateManagerError, match=r"did not answer within 2\.\ds \(read "
                           r"topologies/wc; disconnected for \d+\.\ds\)"):
            state.get(TOPOLOGIES, "wc")
        assert 2.0 <= time.monotonic() - began < 3.0
        began = time.monotonic()
        with state.hurry(0.5), pytest.raises(StateManagerError, match=r"within 0\.\ds "
                                                                      r"\(delete topologies"):
            state.clear("wc")
        assert time.monotonic() - began < 1.0
        state.patience = 30.0
        zookeeper.start()
        assert state.get(TOPOLOGIES, "wc").id == "before"  # waited for the server's return
        wait_until(lambda: state.unreachable_secs() == 0.0, 10, "connected again")
    finally:
        if zookeeper.process is None:
            zookeeper.start()
        state.close()


def test_a_bad_location_or_identity_is_refused_clearly(zookeeper):
    with pytest.raises(StateManagerError, match="credentials go in"):
        open_statemgr(f"zk://u:p@{zookeeper.hosts}/x", ME)
    with pytest.raises(StateManagerError, match="digest identity"):
        open_statemgr(zookeeper.uri("x"), "no-colon")
