"""The command line's verbs on a real topology, and no process left behind."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import psutil
import pytest
from testkit import HERONBRIDGE, heronbridge, read_jsonl, wait_until

# One xdist worker: leftovers() counts every `cli-test` task on the machine.
pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("cli-test")]

TOPOLOGY = str(Path(__file__).resolve().parents[1] / "runtime" / "cli_topology.py")
WORDCOUNT = Path(__file__).resolve().parents[2] / "examples" / "storm_topologies" / "wordcount"


def cli(home, *args, timeout=120):
    return heronbridge(*args, "--home", str(home), timeout=timeout)


def leftovers(home) -> list[str]:
    """Processes of this test's topologies still alive (multilang children run in a
    folder under the home)."""
    found = []
    for proc in psutil.process_iter(["cmdline", "status", "cwd"]):
        cmd = " ".join(proc.info["cmdline"] or [])
        if proc.info["status"] == psutil.STATUS_ZOMBIE:
            continue
        if str(home) in cmd or str(home) in (proc.info["cwd"] or "") or (
                "heronbridge.runtime.instance" in cmd and "cli-test-" in cmd):
            found.append(f"{proc.pid} {cmd[:120]}")
    return found


def emits(out) -> int:
    return sum(r["event"] == "emit" for rs in read_jsonl(out, "spout-*.jsonl").values()
               for r in rs)


@pytest.mark.compat("cli/heronbridge run")
def test_run_for_a_duration_prints_totals_and_leaves_nothing(tmp_path):
    result = cli(tmp_path, "run", TOPOLOGY, "-t", "3", "-o", f"test.out={tmp_path / 'out'}")
    assert result.returncode == 0, result.stderr
    assert "cli-test running" in result.stderr
    assert "totals over" in result.stdout
    for component in ("keys", "record", "__stmgr__"):
        assert component in result.stdout
    assert emits(tmp_path / "out") > 100
    wait_until(lambda: not leftovers(tmp_path), 10, "no leftover process",
               on_timeout=lambda: "\n".join(leftovers(tmp_path)))


def test_ctrl_c_stops_run_cleanly(tmp_path):
    out = tmp_path / "out"
    proc = subprocess.Popen([HERONBRIDGE, "run", TOPOLOGY, "--home",
                             str(tmp_path), "-o", f"test.out={out}"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_until(lambda: emits(out) > 100, 60, "the topology to run")
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr
    assert "totals over" in stdout
    wait_until(lambda: not leftovers(tmp_path), 10, "no leftover process",
               on_timeout=lambda: "\n".join(leftovers(tmp_path)))


@pytest.mark.compat("cli/heronbridge submit", "cli/heronbridge list", "cli/heronbridge deactivate",
                    "cli/heronbridge activate", "cli/heronbridge update", "cli/heronbridge kill")
def test_submit_list_deactivate_activate_kill(tmp_path):
    out = tmp_path / "out"
    result = cli(tmp_path, "submit", TOPOLOGY, "-o", f"test.out={out}")
    assert result.returncode == 0, result.stderr
    assert "submitted cli-test" in result.stdout
    try:
        again = cli(tmp_path, "submit", TOPOLOGY, "-o", f"test.out={out}")
        assert again.returncode == 1  # two topologies with one name cannot run at once
        assert "topology 'cli-test': already running on this machine" in again.stderr
        listing = cli(tmp_path, "list")
        assert "cli-test" in listing.stdout and "RUNNING" in listing.stdout
        wait_until(lambda: emits(out) > 100, 30, "emits")

        assert "PAUSED" in cli(tmp_path, "deactivate", "cli-test").stdout
        time.sleep(1.0)  # the state change travels master -> stream manager -> spout
        paused = emits(out)
        time.sleep(1.5)
        assert emits(out) == paused, "the spout kept emitting while deactivated"
        assert "PAUSED" in cli(tmp_path, "list").stdout

        assert "RUNNING" in cli(tmp_path, "activate", "cli-test").stdout
        wait_until(lambda: emits(out) > paused + 100, 30, "emits after activate")

        updated = cli(tmp_path, "update", "cli-test", "--component-parallelism", "record:2")
        assert updated.returncode == 0 and "spouts paused" in updated.stdout, updated.stderr
        wait_until(lambda: sum(bool(rows) for name, rows in read_jsonl(out).items()
                               if name.startswith("received-record-")) == 2, 30,
                   "tuples at both record tasks")
    finally:
        killed = cli(tmp_path, "kill", "cli-test")
    assert killed.returncode == 0 and "killed cli-test" in killed.stdout
    assert "no topologies" in cli(tmp_path, "list").stdout
    wait_until(lambda: not leftovers(tmp_path), 10, "no leftover process",
               on_timeout=lambda: "\n".join(leftovers(tmp_path)))


def test_killing_the_scheduler_outright_leaves_no_orphan(tmp_path):
    result = cli(tmp_path, "submit", TOPOLOGY, "-o", f"test.out={tmp_path / 'out'}")
    assert result.returncode == 0, result.stderr
    scheduler = next(p for p in psutil.process_iter(["cmdline"])
                     if "heronbridge.runtime.scheduler" in " ".join(p.info["cmdline"] or [])
                     and "--home" in (p.info["cmdline"] or []) and str(tmp_path) in
                     " ".join(p.info["cmdline"]))
    assert len(leftovers(tmp_path)) >= 7  # scheduler, executor, master, managers, 2 tasks
    os.kill(scheduler.pid, signal.SIGKILL)
    wait_until(lambda: not leftovers(tmp_path), 20, "every process to exit",
               on_timeout=lambda: "\n".join(leftovers(tmp_path)))
    cleaned = cli(tmp_path, "kill", "cli-test")
    assert "removed its stale state" in cleaned.stdout


def test_a_streamparse_project_submitted_from_its_folder_runs_until_killed(tmp_path):
    """`heronbridge submit` inside a project, as `sparse submit`; with --multilang each
    component is a child of its task, and kill leaves none of them behind."""
    out = tmp_path / "out"
    submitted = heronbridge("submit", "--multilang", "--home", str(tmp_path), "-o",
                            "wordcount.rounds=100000", "-o", f"example.output.dir={out}",
                            cwd=WORDCOUNT)
    assert submitted.returncode == 0, submitted.stderr
    try:
        assert "wordcount" in cli(tmp_path, "list").stdout
        wait_until(lambda: sum(map(len, read_jsonl(out).values())) > 1000, 60, "counts")
        children = [p for p in psutil.process_iter(["cmdline", "cwd"])
                    if "streamparse.run" in " ".join(p.info["cmdline"] or [])
                    and str(tmp_path) in (p.info["cwd"] or "")]
        assert len(children) == 3  # the spout and two count tasks
    finally:
        killed = cli(tmp_path, "kill", "wordcount")
    assert killed.returncode == 0, killed.stderr
    wait_until(lambda: not leftovers(tmp_path), 10, "no leftover process",
               on_timeout=lambda: "\n".join(leftovers(tmp_path)))
