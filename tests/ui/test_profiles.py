"""Which processes py-spy follows (a task on another host is profiled in
tests/runtime/test_e2e_hosts.py, the page's buttons in test_charts.py)."""

from __future__ import annotations

import os
import subprocess
import sys

from heronbridge.runtime import profiles


def test_a_process_has_children_only_while_it_has_some():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert profiles.has_children(os.getpid())
        assert profiles._follow(os.getpid()) == ["--subprocesses"]
        assert not profiles.has_children(child.pid)
        assert profiles._follow(child.pid) == []
    finally:
        child.kill()
        child.wait()
