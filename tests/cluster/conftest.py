"""A real ZooKeeper server (see zkserver.py), one per session (per xdist worker: the tests
that kill it take only their own worker's tests down with it), and for the Spark tests a
Spark standalone cluster of two workers on 127.0.0.2 and 127.0.0.3 (see sparkcluster.py),
one for the whole run (shared.py: the xdist workers submit to it side by side, each
topology taking the cores its containers need), stopped at its end: every test keeps to
a root, topology and home of its own. The cluster tests reuse the runtime tests'
components and multi-host checks."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from shared import one_for_all_workers
from zkserver import ZooKeeperServer, running_zookeeper

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "runtime"))

# Two workers' tests at once: up to two topologies of two containers each (the examples
# submitted side by side) beside another of three, and one Spark executor of 512 MB per
# topology on each worker. Cores and memory here are slots, not the machine's.
CORES, MEMORY = 8, "8g"


@pytest.fixture(scope="session")
def zookeeper(tmp_path_factory: pytest.TempPathFactory) -> ZooKeeperServer:
    with running_zookeeper(tmp_path_factory.mktemp("zookeeper")) as server:
        yield server


@pytest.fixture(autouse=True)
def _zookeeper_running(request: pytest.FixtureRequest) -> None:
    """The session's server is running for every test that uses it: a test that stopped
    it and failed before starting it again does not take the tests after it down too."""
    if "zookeeper" in request.fixturenames:
        server = request.getfixturevalue("zookeeper")
        if server.process is None or server.process.poll() is not None:
            server.stop()
            server.start()


def _start_spark(folder: Path) -> dict:
    from sparkcluster import SparkCluster

    cluster = SparkCluster(folder, cores=CORES, memory=MEMORY)
    cluster.start()
    return cluster.describe()


def _stop_spark(described: dict) -> None:
    from sparkcluster import SparkCluster

    SparkCluster.attach(described).stop()


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory):
    """The run's standalone Spark cluster; drivers the tests start use it (SPARK_CONF_DIR)."""
    from sparkcluster import SparkCluster

    with one_for_all_workers(tmp_path_factory, "spark", _start_spark, _stop_spark) as described:
        cluster = SparkCluster.attach(described)
        with pytest.MonkeyPatch.context() as env:
            for key in ("SPARK_CONF_DIR", "PYSPARK_PYTHON"):
                env.setenv(key, cluster.env()[key])
            yield cluster
