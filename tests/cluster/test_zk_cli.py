"""The command line against state on a real ZooKeeper server: submit leaves a scheduler
running whose location is an ephemeral node; list, deactivate, activate and kill find the
topology through ZooKeeper alone."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest
from testkit import HERONBRIDGE, read_jsonl, wait_until

from heronbridge.runtime.scheduler import Home
from heronbridge.runtime.statemgr import SCHEDULERS, TOPOLOGIES

pytestmark = [pytest.mark.cluster, pytest.mark.integration]

TOPOLOGY = str(Path(__file__).resolve().parents[1] / "runtime" / "cli_topology.py")


def emits(out) -> int:
    return sum(r["event"] == "emit" for rs in read_jsonl(out, "spout-*.jsonl").values()
               for r in rs)


def test_the_verbs_work_through_zookeeper(zookeeper, tmp_path):
    home = Home(tmp_path / "home")
    env = {**os.environ, "HERONBRIDGE_STATE": zookeeper.uri("verbs"),
           "HERONBRIDGE_HOME": str(home.root)}

    def cli(*args):
        done = subprocess.run([HERONBRIDGE, *args], capture_output=True, text=True,
                              timeout=120, env=env, check=False)
        assert done.returncode == 0, done.stderr
        return done.stdout

    out = tmp_path / "out"
    cli("submit", TOPOLOGY, "--containers", "2", "-o", f"test.out={out}")
    state = Home(home.root, zookeeper.uri("verbs")).open_statemgr()
    try:
        scheduler = state.get(SCHEDULERS, "cli-test")
        _, stat = state.zk.get("/verbs/schedulers/cli-test")
        assert stat.ephemeralOwner != 0 and scheduler.pid > 0
        listed = cli("list")
        assert "cli-test" in listed and "RUNNING" in listed and "1 on 127.0.0.1" in listed
        wait_until(lambda: emits(out) > 50, 30, "emits")
        cli("deactivate", "cli-test")
        assert "PAUSED" in cli("list")
        time.sleep(1.0)
        paused = emits(out)
        time.sleep(1.0)
        assert emits(out) == paused
        cli("activate", "cli-test")
        wait_until(lambda: emits(out) > paused + 50, 30, "emits after activate")
        cli("kill", "cli-test")
        assert state.get(TOPOLOGIES, "cli-test") is None
        assert state.get(SCHEDULERS, "cli-test") is None
        assert "no topologies" in cli("list")
    finally:
        state.close()
