"""The local-filesystem state manager keeps Heron's node layout."""

from __future__ import annotations

import pytest

from heronbridge.runtime.errors import StateManagerError
from heronbridge.runtime.proto import plans_pb2, topology_pb2
from heronbridge.runtime.state import (
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
