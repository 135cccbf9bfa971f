"""The local-filesystem state manager keeps Heron's node layout."""

from __future__ import annotations

import pytest

from heronbridge.runtime.errors import StateManagerError
from heronbridge.runtime.proto import plans_pb2, topology_pb2
from heronbridge.runtime.statemgr import (
    PACKING_PLANS,
    TMASTERS,
    TOPOLOGIES,
    LocalFileStateManager,
)


def test_nodes_round_trip_and_list_and_clear(tmp_path):
    state = LocalFileStateManager(tmp_path)
    state.put(TOPOLOGIES, "wc", topology_pb2.Topology(id="wc-1", name="wc"))
    state.put(TMASTERS, "wc", plans_pb2.TopologyMasterLocation(host="127.0.0.1", server_port=9))
    assert (tmp_path / "topologies" / "wc").is_file()
    assert state.get(TOPOLOGIES, "wc").id == "wc-1"
    assert state.names(TOPOLOGIES) == ["wc"]
    assert state.get(PACKING_PLANS, "wc") is None
    state.clear("wc")
    assert state.names(TOPOLOGIES) == [] and state.get(TMASTERS, "wc") is None


def test_a_node_of_the_wrong_type_or_corrupt_is_refused(tmp_path):
    state = LocalFileStateManager(tmp_path)
    with pytest.raises(StateManagerError, match="expects Topology"):
        state.put(TOPOLOGIES, "wc", plans_pb2.PackingPlan())
    (tmp_path / "topologies" / "wc").write_bytes(b"\xff\xff\xff")
    with pytest.raises(StateManagerError, match="is not a valid Topology"):
        state.get(TOPOLOGIES, "wc")


def test_a_local_watch_sees_every_change_and_the_deletion(tmp_path):
    import queue

    state = LocalFileStateManager(tmp_path)
    seen: queue.Queue = queue.Queue()
    watch = state.watch(TOPOLOGIES, "wc", lambda m: seen.put(m and m.id))
    assert seen.get(timeout=5) is None  # at once, for a missing node
    for version in ("wc-1", "wc-2"):
        state.put(TOPOLOGIES, "wc", topology_pb2.Topology(id=version))
        assert seen.get(timeout=5) == version
    (tmp_path / "topologies" / "wc").write_bytes(b"\xff\xff\xff")  # corrupt: skipped
    state.delete(TOPOLOGIES, "wc")
    assert seen.get(timeout=5) is None
    watch.cancel()
    state.claim(TMASTERS, "wc", plans_pb2.TopologyMasterLocation(server_port=1))
    state.claim(TMASTERS, "wc", plans_pb2.TopologyMasterLocation(server_port=2))  # no sessions
    assert state.wait_for(TMASTERS, "wc", 5).server_port == 2
    state.put(TOPOLOGIES, "wc", topology_pb2.Topology(id="wc-3"))
    with pytest.raises(queue.Empty):
        seen.get(timeout=0.3)


def test_the_zookeeper_identity_is_made_once_and_kept_private(tmp_path):
    from heronbridge.runtime.scheduler import Home

    home = Home(tmp_path / "home")
    identity = home.zookeeper_identity()
    user, _, password = identity.partition(":")
    assert user and len(password) >= 24 and home.zookeeper_identity() == identity
    assert (home.root / "zookeeper-digest").stat().st_mode & 0o777 == 0o600
