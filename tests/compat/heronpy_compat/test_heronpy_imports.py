"""heronpy 0.20.5 imports under the runtime's protobuf, which keeps its fast backend."""

from __future__ import annotations

import importlib
import importlib.util

import pytest
from google.protobuf.internal import api_implementation

from heronbridge.compat import heronpy as compat_heronpy
from heronbridge.compat.heronpy import HeronpyMissing, require_heronpy
from heronbridge.runtime.proto import control_pb2, topology_pb2
from heronbridge.shims.heronpy.imports import (
    Pb2Loader,
    PlainPackageLoader,
    namespace_only,
    serialized_descriptor,
)

PB2 = ["ckptmgr", "common", "execution_state", "metrics", "packing_plan", "physical_plan",
       "scheduler", "stats", "stmgr", "tmanager", "topology", "tuple"]


@pytest.mark.parametrize("name", PB2)
def test_every_shipped_pb2_module_is_built_from_its_descriptor(name):
    module = importlib.import_module(f"heronpy.proto.{name}_pb2")
    assert isinstance(module.__spec__.loader, Pb2Loader)
    assert module.DESCRIPTOR.name == f"{name}.proto"
    assert module.DESCRIPTOR.package.startswith("heron.proto.")


def test_pb2_dependencies_resolve_and_messages_round_trip():
    from heronpy.proto import physical_plan_pb2
    from heronpy.proto import topology_pb2 as heron_topology

    # physical_plan.proto imports topology.proto: its messages embed heron's Topology.
    plan = physical_plan_pb2.PhysicalPlan()
    plan.topology.CopyFrom(heron_topology.Topology(id="t-1", name="t", state=1))
    assert physical_plan_pb2.PhysicalPlan.FromString(plan.SerializeToString()) == plan
    assert heron_topology.Grouping.Value("LOWEST") == 4
    assert heron_topology.SHUFFLE == 1


def test_the_runtime_keeps_the_fast_backend_and_its_own_messages():
    importlib.import_module("heronpy.api.topology")
    assert api_implementation.Type() == "upb"
    msg = topology_pb2.Topology(id="x", name="wordcount")
    msg.components.add(name="count", parallelism=2)
    assert topology_pb2.Topology.FromString(msg.SerializeToString()) == msg
    request = control_pb2.RegisterInstanceRequest(topology_id="x", task_id=3, pid=7)
    assert control_pb2.RegisterInstanceRequest.FromString(request.SerializeToString()) == request
    # Both define a Topology message, in different packages and files.
    from heronpy.proto import topology_pb2 as heron_topology

    assert heron_topology.Topology.DESCRIPTOR.full_name == "heron.proto.api.Topology"
    assert topology_pb2.Topology.DESCRIPTOR.full_name == "heronbridge.runtime.Topology"


def test_namespace_only_packages_become_plain_packages_with_their_docstring():
    import heronpy
    import heronpy.api
    import heronpy.api.bolt.bolt

    assert isinstance(heronpy.api.__spec__.loader, PlainPackageLoader)
    assert heronpy.api.__doc__ == "module for heronpy API"
    assert heronpy.__doc__ is None
    assert heronpy.api.bolt.bolt.Bolt.__module__ == "heronpy.api.bolt.bolt"


def test_init_files_that_do_more_than_declare_a_namespace_are_left_alone(tmp_path):
    only = tmp_path / "only.py"
    only.write_text("'''doc'''\n__import__('pkg_resources').declare_namespace(__name__)\n")
    more = tmp_path / "more.py"
    more.write_text("__import__('pkg_resources').declare_namespace(__name__)\nX = 1\n")
    other = tmp_path / "other.py"
    other.write_text("__import__('os').declare_namespace(__name__)\n")
    assert namespace_only(only) == "doc"
    assert namespace_only(more) is False
    assert namespace_only(other) is False


def test_a_pb2_file_without_a_descriptor_is_refused_by_name(tmp_path):
    bad = tmp_path / "bad_pb2.py"
    bad.write_text("X = 1\n")
    with pytest.raises(ImportError, match=r"bad_pb2.py.*serialized_pb"):
        serialized_descriptor(bad)


def test_a_missing_heronpy_is_reported_with_how_to_install_it(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name.startswith(
        "heronpy") else real(name, *a))
    with pytest.raises(HeronpyMissing) as info:
        require_heronpy("topology 'wordcount'")
    text = str(info.value)
    assert "topology 'wordcount' needs heronpy" in text
    assert "pip install --no-deps heronpy==0.20.5" in text
    assert compat_heronpy.INSTALL_HINT in text
