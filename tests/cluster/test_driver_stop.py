"""The Spark scheduler (the topology's Spark driver) SIGTERMed while its ZooKeeper is dead
exits within SHUTDOWN_GRACE_SECS: it cannot tell its containers to stop through the
state, so it cancels their jobs, and its last calls to the state give up in time. Its
driver JVM and the containers on the workers go with it. Not signalled at all, it stops
by itself once its state has been unreachable for heronbridge.scheduler.orphan.secs. A
ZooKeeper server of the test's own, as the test kills it; the session's Spark cluster."""

from __future__ import annotations

import signal
import subprocess
import time

import psutil
import pytest
from rt_components import KeySpout, RecordingBolt
from testkit import wait_until
from zkserver import running_zookeeper

from heronbridge.runtime import Grouping, TopologyBuilder
from heronbridge.runtime.scheduler import Home
from heronbridge.runtime.scheduler.launch import Launch
from heronbridge.runtime.scheduler.lifecycle import SHUTDOWN_GRACE_SECS
from heronbridge.runtime.scheduler.spark import SparkOptions

pytestmark = [pytest.mark.cluster, pytest.mark.integration]


def topology_processes(launch: Launch) -> list[psutil.Process]:
    """The runtime's processes of one submission: its scheduler, its containers' executors
    and everything they run."""
    found = []
    for p in psutil.process_iter(["cmdline"]):
        argv = p.info["cmdline"] or []
        if any(a.startswith("heronbridge.runtime.") for a in argv) \
                and any(a == launch.name or launch.topology_id in a for a in argv):
            found.append(p)
    return found


ORPHAN_SECS = 8.0


@pytest.mark.parametrize("stop", [
    "sigterm",
    pytest.param("orphaned", marks=pytest.mark.compat(
        "config/heronbridge.scheduler.orphan.secs", on="spark"))])
def test_the_spark_driver_with_its_zookeeper_dead_stops_within_the_grace(
        spark, tmp_path, capsys, stop):
    name = f"driver-{stop}"
    with running_zookeeper(tmp_path / "zookeeper") as zookeeper:
        config = {"topology.stmgrs": 2, "test.out": str(tmp_path / "out"),
                  "test.count": 50, "test.interval": 0.02}
        if stop == "orphaned":
            config["heronbridge.scheduler.orphan.secs"] = ORPHAN_SECS
        b = TopologyBuilder(name, config)
        b.spout("keys", KeySpout)
        b.bolt("record", RecordingBolt, inputs={"keys": Grouping.SHUFFLE}, par=2)
        home = Home(tmp_path / "home", zookeeper.uri(name))
        state = home.open_statemgr()
        launch = Launch(b.build(), home, state, detached=True,
                        spark=SparkOptions(spark.master))

        def log() -> str:
            return launch.scheduler_log.read_text(errors="replace") \
                if launch.scheduler_log.is_file() else ""

        try:
            launch.start()
            driver = psutil.Process(launch.process.pid)
            jvm = [p for p in driver.children(recursive=True) if "java" in p.name()]
            assert jvm, driver.children(recursive=True)
            assert len(topology_processes(launch)) > 2  # the driver, and containers
            zookeeper.stop(signal.SIGKILL)
            wait_until(lambda: "connection suspended" in log(), 30,
                       "the driver to notice ZooKeeper gone", on_timeout=log)
            began = time.monotonic()
            if stop == "sigterm":
                launch.process.send_signal(signal.SIGTERM)
            else:
                wait_until(lambda: "heronbridge.scheduler.orphan.secs" in log(),
                           ORPHAN_SECS + 30, "the driver to find itself orphaned",
                           on_timeout=log)
                began = time.monotonic()
            try:
                code = launch.process.wait(SHUTDOWN_GRACE_SECS + 15)
            except subprocess.TimeoutExpired:
                pytest.fail(f"the driver still runs {SHUTDOWN_GRACE_SECS + 15:g}s after "
                            f"its stop began ({stop}):\n{log()[-4000:]}")
            took = time.monotonic() - began
            said = log()
            assert took < SHUTDOWN_GRACE_SECS, said[-4000:]
            assert code == 1, said[-4000:]  # its own way, not the watchdog's
            if stop == "sigterm":
                assert f"topology '{name}': stopping (SIGTERM)" in said, said[-4000:]
            else:
                assert "whoever owns the topology cannot reach this scheduler to kill it" \
                    in said, said[-4000:]
            assert f"topology '{name}': cannot tell its containers to stop through the " \
                   "state; cancelling their Spark jobs" in said, said[-4000:]
            assert f"its nodes in the state stay (heronbridge kill {name} removes them)" \
                in said, said[-4000:]
            psutil.wait_procs(jvm, timeout=30)
            assert not [p for p in jvm if p.is_running()
                        and p.status() != psutil.STATUS_ZOMBIE], "the driver's JVM outlived it"
            wait_until(lambda: not topology_processes(launch), 60,
                       "the containers on the workers to stop",
                       on_timeout=lambda: str(topology_processes(launch)))
            with capsys.disabled():
                print(f"\nSpark driver, ZooKeeper dead: {stop} to exit {took:.1f}s "
                      f"(grace {SHUTDOWN_GRACE_SECS:g}s)")
        finally:
            launch.stop()
            state.close()
