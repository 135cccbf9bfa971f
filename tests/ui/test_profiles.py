"""Which processes py-spy follows: a task's subprocesses (a multilang component's) only
when it has some, since scanning for them doubles py-spy's own CPU."""

from __future__ import annotations

import os
import subprocess
import sys

from heronbridge.ui import profiles


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
