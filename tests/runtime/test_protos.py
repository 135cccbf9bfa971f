"""The committed protobuf modules are what the .proto files generate."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "regenerate_protos.py"


def test_generated_modules_are_not_stale():
    pytest.importorskip("grpc_tools", reason="install the 'proto' extra (tox does)")
    spec = importlib.util.spec_from_file_location("regenerate_protos", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.stale_modules() == [], "run: python scripts/regenerate_protos.py"
