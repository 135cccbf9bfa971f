"""A real ZooKeeper server per test module (see zkserver.py), stopped after it. The
cluster tests reuse the runtime tests' components and multi-host checks."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from zkserver import ZooKeeperServer

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "runtime"))


@pytest.fixture(scope="module")
def zookeeper(tmp_path_factory: pytest.TempPathFactory) -> ZooKeeperServer:
    server = ZooKeeperServer(tmp_path_factory.mktemp("zookeeper"))
    server.start()
    try:
        yield server
    finally:
        server.stop()
