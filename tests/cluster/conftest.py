"""A real ZooKeeper server (see zkserver.py), and for the Spark tests a Spark standalone
cluster of two workers on 127.0.0.2 and 127.0.0.3 (see sparkcluster.py), each started
once per session (per xdist worker; the Spark tests are two xdist groups, "spark" and
"spark-b", so each worker starts a cluster of its own, on ports of its own, and the two
halves run side by side) and stopped at its end: every test keeps to a root, topology and
home of its own. The cluster tests reuse the runtime tests' components and multi-host
checks."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from zkserver import ZooKeeperServer, running_zookeeper

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "runtime"))


@pytest.fixture(scope="session")
def zookeeper(tmp_path_factory: pytest.TempPathFactory) -> ZooKeeperServer:
    with running_zookeeper(tmp_path_factory.mktemp("zookeeper")) as server:
        yield server


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory):
    """A standalone Spark cluster; drivers the tests start use it (SPARK_CONF_DIR)."""
    from sparkcluster import SparkCluster

    cluster = SparkCluster(tmp_path_factory.mktemp("spark"))
    cluster.start()
    try:
        with pytest.MonkeyPatch.context() as env:
            for key in ("SPARK_CONF_DIR", "PYSPARK_PYTHON"):
                env.setenv(key, cluster.env()[key])
            yield cluster
    finally:
        cluster.stop()
