"""/proc readings: liveness, process groups, trees and their kinds."""

from __future__ import annotations

import os
import subprocess
import sys
import time

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
