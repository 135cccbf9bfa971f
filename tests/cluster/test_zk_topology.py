"""A topology whose state is on a real ZooKeeper server, its containers on three
(simulated) hosts: `heronbridge list` shows each container's host, the ZooKeeper server
dies and comes back mid-run and the topology survives it, and a stream manager killed
afterwards is followed by its peers."""

from __future__ import annotations

import os
import signal
import subprocess

import pytest
from test_e2e_hosts import (
    COUNT,
    HOSTS,
    acked,
    kill_a_stream_manager_and_check_no_id_is_lost,
    spread_plan,
)
from testkit import HERONBRIDGE, Running, wait_until

from heronbridge.runtime.errors import StateManagerError
from heronbridge.runtime.scheduler import Home
from heronbridge.runtime.statemgr import TMASTERS

pytestmark = [pytest.mark.cluster, pytest.mark.integration]


def master_location(state, name):
    try:
        return state.get(TMASTERS, name)
    except StateManagerError:  # the client still reconnecting
        return None


def test_a_topology_on_zookeeper_survives_the_server_dying(zookeeper, tmp_path):
    home = Home(tmp_path / "home", zookeeper.uri("heronbridge"))
    state = home.open_statemgr()
    out = tmp_path / "out"
    # Slower than the default (1,500 ids over 18 s): the source must still be emitting
    # after ZooKeeper's outage, when a stream manager is killed and its restarted tasks
    # are to receive tuples.
    running = Running(spread_plan("on-zk", out, **{"test.interval": 0.012}), home, state)
    running.hosts = HOSTS
    try:
        with running:
            listed = subprocess.run(
                [HERONBRIDGE, "list", "--home", str(home.root), "--state", home.state_uri],
                capture_output=True, text=True, timeout=60, check=False,
                env={**os.environ, "HERONBRIDGE_STATE": ""})
            assert listed.returncode == 0, listed.stderr
            for container, host in HOSTS.items():
                assert f"{container} on {host}" in listed.stdout, listed.stdout
            assert "on-zk" in listed.stdout and "RUNNING" in listed.stdout

            wait_until(lambda: len(acked(out)) > 100, 30, "acks", on_timeout=running.logs)
            zookeeper.stop(signal.SIGKILL)
            during = len(acked(out))
            wait_until(lambda: len(acked(out)) > during + 100, 30,
                       "tuples to keep flowing without ZooKeeper", on_timeout=running.logs)
            zookeeper.start()
            # The master's location is there once ZooKeeper is back: its session survived,
            # or (a server slow to come back expires it) the master put the node back.
            wait_until(lambda: master_location(state, "on-zk"), 30,
                       "the master's location after ZooKeeper came back",
                       on_timeout=running.logs)
            assert running.metrics()["record"]["execute-count"] > 0  # the CLI's path
            kill_a_stream_manager_and_check_no_id_is_lost(running, state, out, container=2)
        assert acked(out) == set(range(COUNT))
        assert state.names("topologies") == []  # stopping cleared its nodes
    finally:
        state.close()
