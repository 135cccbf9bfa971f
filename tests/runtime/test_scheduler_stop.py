"""A detached local scheduler stops within its grace whatever it cannot reach: SIGTERMed
while its ZooKeeper is dead, it stops its containers and exits within
SHUTDOWN_GRACE_SECS; cut off from ZooKeeper for `heronbridge.scheduler.orphan.secs` (an
outage shorter than that forgiven), it stops by itself; and a stop stuck anywhere is
ended by the watchdog, which says where it was stuck. The ZooKeeper tests run in the
`cluster` env (each starts a server of its own, as it kills it)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest
from rt_components import KeySpout, RecordingBolt
from testkit import wait_until

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cluster"))
from zkserver import running_zookeeper  # noqa: E402

from heronbridge.runtime import Grouping, TopologyBuilder  # noqa: E402
from heronbridge.runtime.scheduler import Home  # noqa: E402
from heronbridge.runtime.scheduler.launch import Launch  # noqa: E402
from heronbridge.runtime.scheduler.lifecycle import (  # noqa: E402
    EXIT_STUCK,
    SHUTDOWN_GRACE_SECS,
)

pytestmark = pytest.mark.integration

ORPHAN_SECS = 8  # above a restarted server's reconnect (its JVM's start, the back-off)


@pytest.fixture
def zookeeper(tmp_path):
    with running_zookeeper(tmp_path / "zookeeper") as server:
        yield server


def start_detached(zookeeper, tmp_path: Path, name: str, **conf: object) -> Launch:
    """Two containers under a detached scheduler, on ZooKeeper state."""
    b = TopologyBuilder(name, {"topology.stmgrs": 2, "test.out": str(tmp_path / "out"),
                               "test.count": 50, "test.interval": 0.02, **conf})
    b.spout("keys", KeySpout)
    b.bolt("record", RecordingBolt, inputs={"keys": Grouping.SHUFFLE}, par=2)
    home = Home(tmp_path / "home", zookeeper.uri(name))
    launch = Launch(b.build(), home, home.open_statemgr(), detached=True)
    launch.start(timeout=90)
    return launch


def under(pid: int) -> list[psutil.Process]:
    """Every process under `pid` (its executors and their processes)."""
    procs = psutil.Process(pid).children(recursive=True)
    assert any("heronbridge.runtime.scheduler.executor" in p.cmdline() for p in procs), procs
    return procs


def alive(procs: list[psutil.Process]) -> list[psutil.Process]:
    out = []
    for p in procs:
        try:
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                out.append(p)
        except psutil.NoSuchProcess:
            pass
    return out


def scheduler_log(launch: Launch) -> str:
    return launch.scheduler_log.read_text(errors="replace")


def finish(launch: Launch, procs: list[psutil.Process]) -> None:
    for p in alive(procs):
        p.kill()
    launch.stop()
    launch.statemgr.close()


@pytest.mark.cluster
def test_sigtermed_with_its_zookeeper_dead_a_scheduler_stops_within_the_grace(
        zookeeper, tmp_path, capsys):
    launch = start_detached(zookeeper, tmp_path, "stop-dead-zk")
    procs = under(launch.process.pid)
    try:
        zookeeper.stop(signal.SIGKILL)
        wait_until(lambda: "connection suspended" in scheduler_log(launch), 30,
                   "the scheduler to notice ZooKeeper gone",
                   on_timeout=lambda: scheduler_log(launch))
        began = time.monotonic()
        launch.process.send_signal(signal.SIGTERM)
        try:
            code = launch.process.wait(SHUTDOWN_GRACE_SECS + 15)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the scheduler still runs {SHUTDOWN_GRACE_SECS + 15:g}s after SIGTERM:\n"
                        + scheduler_log(launch)[-4000:])
        took = time.monotonic() - began
        said = scheduler_log(launch)
        assert took < SHUTDOWN_GRACE_SECS, said[-4000:]
        # It ended its own way (not the watchdog's): containers stopped, then the state
        # it could not clear named.
        assert code == 1, said[-4000:]
        assert "stopping (SIGTERM)" in said and "its containers stopped, but its nodes in " \
            "the state stay (heronbridge kill stop-dead-zk removes them)" in said, said[-4000:]
        assert not alive(procs), alive(procs)
        with capsys.disabled():
            print(f"\nlocal scheduler, ZooKeeper dead: SIGTERM to exit {took:.1f}s "
                  f"(grace {SHUTDOWN_GRACE_SECS:g}s)")
    finally:
        finish(launch, procs)


@pytest.mark.cluster
@pytest.mark.compat("config/heronbridge.scheduler.orphan.secs")
def test_cut_off_from_its_state_for_the_orphan_bound_a_scheduler_stops_by_itself(
        zookeeper, tmp_path, capsys):
    launch = start_detached(zookeeper, tmp_path, "orphan",
                            **{"heronbridge.scheduler.orphan.secs": ORPHAN_SECS})
    procs = under(launch.process.pid)
    try:
        # An outage shorter than the bound is forgiven: it counts from the latest drop.
        first = time.monotonic()
        zookeeper.stop(signal.SIGKILL)
        zookeeper.start()
        wait_until(lambda: "ZooKeeper connection back" in scheduler_log(launch), ORPHAN_SECS,
                   "the scheduler to reconnect", on_timeout=lambda: scheduler_log(launch))
        time.sleep(max(0.0, first + ORPHAN_SECS + 1 - time.monotonic()))
        assert launch.process.poll() is None, scheduler_log(launch)[-4000:]

        began = time.monotonic()
        zookeeper.stop(signal.SIGKILL)
        try:
            code = launch.process.wait(ORPHAN_SECS + SHUTDOWN_GRACE_SECS + 15)
        except subprocess.TimeoutExpired:
            pytest.fail("the scheduler still runs with its state gone for "
                        f"{ORPHAN_SECS + SHUTDOWN_GRACE_SECS + 15:g}s:\n"
                        + scheduler_log(launch)[-4000:])
        took = time.monotonic() - began
        said = scheduler_log(launch)
        assert ORPHAN_SECS <= took < ORPHAN_SECS + SHUTDOWN_GRACE_SECS, said[-4000:]
        assert code == 1, said[-4000:]
        assert re.search(
            f"topology 'orphan': its state at {re.escape(launch.statemgr.uri)} has been "
            rf"unreachable for \d+s \(heronbridge.scheduler.orphan.secs = {ORPHAN_SECS}\): "
            "whoever owns the topology cannot reach this scheduler to kill it either; "
            "stopping the topology", said), said[-4000:]
        assert not alive(procs), alive(procs)
        with capsys.disabled():
            print(f"\nlocal scheduler, ZooKeeper dead, orphan bound {ORPHAN_SECS}s: exited "
                  f"{took:.1f}s after ZooKeeper died")
    finally:
        finish(launch, procs)


STUCK = textwrap.dedent("""
    import sys, threading
    from heronbridge.runtime.process import log_to_stderr
    from heronbridge.runtime.scheduler.lifecycle import serve
    from heronbridge.runtime.statemgr import open_statemgr

    class Stuck:
        orphan_secs = None

        def start(self):
            print("started", flush=True)

        def check(self):
            return []

        def stop(self):
            threading.Event().wait()  # what a call with no deadline does

        def kill_now(self):
            print("killing what it started", flush=True)

    log_to_stderr()
    serve(Stuck(), open_statemgr(sys.argv[1]), "stuck", grace=1.0)
""")


def test_a_stop_stuck_past_the_grace_is_ended_by_the_watchdog_which_says_where(tmp_path):
    script = tmp_path / "stuck.py"
    script.write_text(STUCK)
    proc = subprocess.Popen([sys.executable, str(script), str(tmp_path / "state")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        assert proc.stdout.readline() == "started\n"
        began = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
        took = time.monotonic() - began
    finally:
        proc.kill()
    assert proc.returncode == EXIT_STUCK, err
    assert 1.0 <= took < 5.0, err
    assert out == "killing what it started\n"
    assert re.search(r"topology 'stuck': still stopping \d+s after SIGTERM \(grace 1s\); "
                     "killing what is left of its containers and exiting", err), err
    assert ", in stop\n    threading.Event().wait()" in err, err  # where it was stuck
