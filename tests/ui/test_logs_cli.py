"""`heronbridge logs NAME [COMPONENT | TASK] [-f]` on a running topology: a component's
tasks merged by time, followed live (an error a bolt raises shows while it follows), and
a selector that names nothing refused with what there is; `heronbridge set-log-level`:
a component's DEBUG lines in its task's log until the timeout, no other component's."""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from testkit import heronbridge, wait_until

from heronbridge.ui.files import task_log

pytestmark = pytest.mark.integration

HERONBRIDGE = str(Path(sys.executable).parent / "heronbridge")


def _command(served, *args: str) -> list[str]:
    return [HERONBRIDGE, "logs", served.name, *args, "--home", str(served.home.root)]


@pytest.mark.compat("cli/heronbridge logs")
def test_logs_merges_a_components_tasks_and_follows_them(served):
    wait_until(lambda: len(served.json("/ui/api/topology/shown")["tasks"]) == 4, 30,
               "every task running")
    proc = subprocess.Popen(_command(served, "work", "-f", "-n", "50"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x) for x in proc.stdout], daemon=True).start()
    seen: list[str] = []

    def saw(text: str) -> bool:
        while not lines.empty():
            seen.append(lines.get())
        return any(text in line for line in seen)

    try:
        wait_until(lambda: saw("[work 3]") and saw("[work 4]"), 30,
                   "the first lines of both work tasks")
        assert not any(line.startswith(("[numbers", "[sink")) for line in seen)
        before = len(seen)
        (served.flags / "raise-work").touch()
        wait_until(lambda: saw("ValueError: work was told to fail"), 40,
                   "the error the bolt raised, while following")
        assert len(seen) > before
    finally:
        proc.terminate()
        proc.wait(10)
    print("".join(seen[-30:]))


def test_logs_refuses_a_component_it_does_not_have(served):
    done = heronbridge(*_command(served, "nosuch")[1:], timeout=60)
    assert done.returncode == 1
    assert "expected a component (numbers, sink, work) or a task id" in \
        done.stdout + done.stderr
    done = heronbridge(*_command(served, "1", "-n", "5")[1:], timeout=60)
    assert done.returncode == 0
    printed = done.stdout.splitlines()
    assert 0 < len(printed) <= 5 and all(line.startswith("[numbers 1] ") for line in printed)


@pytest.mark.compat("cli/heronbridge set-log-level")
def test_a_log_level_set_at_run_time_shows_in_the_log_until_its_timeout(served):
    wait_until(lambda: len(served.json("/ui/api/topology/shown")["tasks"]) == 4, 30,
               "every task running")
    log = task_log(served.tracker.find("shown"), served.home.root, 4)
    assert "work passes" not in log.read_text()  # DEBUG is off
    done = heronbridge("set-log-level", served.name, "work", "DEBUG", "-t", "4", "--home",
                       str(served.home.root), timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "work, logger root: DEBUG for 4s" in done.stdout
    wait_until(lambda: "work passes" in log.read_text(), 20, "the bolt's DEBUG lines")
    wait_until(lambda: "log level of 'root' back to" in log.read_text(), 20,
               "the level put back after its timeout")
    after = log.read_text().rsplit("log level of 'root' back to", 1)[1]
    time.sleep(2)
    assert "work passes" not in log.read_text().rsplit("log level of 'root' back to", 1)[1]
    assert "work passes" not in after
    sink = task_log(served.tracker.find("shown"), served.home.root, 2).read_text()
    assert "log level of 'root' set" not in sink  # another component: untouched
    done = heronbridge("set-log-level", served.name, "nosuch", "DEBUG", "--home",
                       str(served.home.root), timeout=60)
    assert done.returncode == 1 and "has no component 'nosuch'" in done.stdout + done.stderr
