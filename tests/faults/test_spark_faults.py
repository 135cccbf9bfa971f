"""Issue 25's shape on the Spark scheduler: three containers as long-running Spark tasks
on a standalone cluster of two workers (127.0.0.2 and 127.0.0.3), state on ZooKeeper;
a stream manager SIGKILLed (at `full` size also a whole container, which Spark runs
again, and one container). Every id whose ack reached the ReliableSpout (pystorm's
defaults) is in a sink's file, and no id fails more than twice a kill."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from nemeses import Kill
from suite import RelayWorkload, alone, size, stage_for

from heronbridge.runtime.scheduler import Home
from heronbridge.runtime.scheduler.spark import SparkOptions

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cluster"))

from zkserver import running_zookeeper  # noqa: E402

# Beside the other tests: its Spark workers and ZooKeeper listen on ports of their own on
# the loopback hosts, and it kills only its own processes (the nemeses that cut hosts off
# run alone, after).
pytestmark = [pytest.mark.faults, pytest.mark.integration]


@pytest.fixture(scope="module")
def spark_zk(tmp_path_factory):
    from sparkcluster import SparkCluster

    cluster = SparkCluster(tmp_path_factory.mktemp("spark"))
    with running_zookeeper(tmp_path_factory.mktemp("zookeeper")) as zookeeper:
        try:
            cluster.start()
            with pytest.MonkeyPatch.context() as env:
                for key in ("SPARK_CONF_DIR", "PYSPARK_PYTHON"):
                    env.setenv(key, cluster.env()[key])
                yield cluster, zookeeper
        finally:
            cluster.stop()


@pytest.mark.compat("api/ReliableSpout", "api/message timeouts", "api/fail", "api/anchoring",
                    on="spark")
@pytest.mark.timeout(900)  # the cluster's start, in the first test, is counted too
@pytest.mark.parametrize("containers", [1, 3] if size() == "full" else [3],
                         ids=lambda n: f"{n}-container{'s' * (n > 1)}")
@pytest.mark.parametrize("kind", ["stream manager", "container"] if size() == "full"
                         else ["stream manager"])
def test_relay_on_spark_loses_no_acked_id(spark_zk, tmp_path, monkeypatch, kind, containers,
                                          record_row):
    spark, zookeeper = spark_zk
    home = Home(tmp_path / "hb", zookeeper.uri(f"spark-{tmp_path.name}"))
    monkeypatch.setenv("HERONBRIDGE_HOME", str(home.root))
    state = home.open_statemgr()
    try:
        workload = RelayWorkload(home, state, tmp_path, containers, ids=2000,
                                 spark=SparkOptions(spark.master))
        with workload.running:
            row = alone(workload, stage_for(workload, tmp_path), Kill(kind))
    finally:
        state.close()
    row.scheduler = "spark"
    record_row(row)
    assert row.lost == 0, row.detail
    assert row.max_fails <= 2, row.detail
