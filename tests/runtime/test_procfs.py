"""/proc readings: liveness, process groups, trees and their kinds; a loopback peer's owner."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import pytest

from heronbridge.runtime import procfs


def test_a_zombie_is_not_alive_and_a_reaped_pid_neither():
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    deadline = time.monotonic() + 10
    while procfs.read(child.pid).state != "Z" and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not procfs.pid_alive(child.pid)  # exited, not yet reaped
    child.wait()
    assert not procfs.pid_alive(child.pid)
    assert procfs.pid_alive(os.getpid())


def test_descendants_are_classified_by_command_line_then_by_parent():
    # A stand-in "task" (its command line names the module) with a child of its own.
    code = "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', " \
           "'import time; time.sleep(30)']); time.sleep(30)"
    task = subprocess.Popen([sys.executable, "-c", code, "heronbridge.runtime.instance"],
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 10
        procs = []
        while len(procs) < 2 and time.monotonic() < deadline:
            procs = [p for p in procfs.descendants() if task.pid in (p.pid, p.ppid)]
            time.sleep(0.02)
        kinds = {p.pid: p.kind for p in procs}
        assert kinds.pop(task.pid) == "task"
        assert list(kinds.values()) == ["task subprocess"]
        assert sorted(procfs.group_members(task.pid)) == sorted(p.pid for p in procs)
        assert all(p.cpu >= 0 and p.peak_rss > 0 for p in procs)
    finally:
        os.killpg(task.pid, 9)
        task.wait()


@pytest.mark.parametrize("host", ["127.0.0.1", "::1"])
def test_a_loopback_peers_owner_from_the_kernels_diagnostics_and_from_its_tables(host):
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family) as server:
        server.bind((host, 0))
        server.listen()
        client = socket.create_connection(server.getsockname()[:2])
        accepted, _ = server.accept()
        with accepted:
            peer, local = accepted.getpeername()[:2], accepted.getsockname()[:2]
            assert procfs.tcp_peer_owner(accepted) == os.getuid()
            assert procfs._diag_owner(family, peer, local) == os.getuid()
            assert procfs._table_owner(peer, local) == os.getuid()
            client.close()  # a closed socket is nobody's: a stranger
            wait = time.monotonic() + 5
            while procfs.tcp_peer_owner(accepted) is not None and time.monotonic() < wait:
                time.sleep(0.05)
            assert procfs.tcp_peer_owner(accepted) is None
            assert procfs._table_owner(peer, local) is None
