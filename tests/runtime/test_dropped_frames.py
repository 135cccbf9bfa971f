"""Frames for a task that is down: held until it is back; or, when they cannot be held,
dropped, their trees failing back to their spouts a message timeout later (with message
timeouts off they would otherwise stay pending forever); `run` shows how many were
dropped."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest
from rich.console import Console
from testkit import HERONBRIDGE, read_jsonl

from heronbridge.cli.status import STMGR, ComponentTotals, RateLine, totals_table
from heronbridge.runtime.telemetry import DROPPED_FRAMES

TOPOLOGY = Path(__file__).with_name("dropped_topology.py")
COUNT = 600


def test_run_shows_the_frames_the_stream_managers_dropped():
    stmgr, bolt = ComponentTotals(STMGR), ComponentTotals("bolt")
    stmgr.add({DROPPED_FRAMES: 1234}, {}, {})
    bolt.add({"execute-count": 10}, {}, {})
    console = Console(width=250, record=True)
    console.print(totals_table("totals", {STMGR: stmgr, "bolt": bolt}, 1.0))
    text = console.export_text()
    assert "dropped" in text.splitlines()[2]  # a column
    assert "1,234" in next(line for line in text.splitlines() if STMGR in line)
    assert "stream managers dropped 1,234 frames for tasks that were down" in text
    line = RateLine().render("t", 1.0, 1.0, {STMGR: stmgr, "bolt": bolt})
    assert "dropped 1,234 frames" in line
    assert "dropped" not in RateLine().render("t", 1.0, 1.0, {"bolt": bolt})


@pytest.mark.compat("config/heronbridge.held.max.bytes")
@pytest.mark.integration
@pytest.mark.parametrize("held", ["held", "dropped"])
def test_frames_for_a_task_that_is_down_are_held_or_fail_back_without_message_timeouts(
        tmp_path, held):
    # Held (the default): the restarted task gets them, and only the tuple the dying task
    # failed is failed. Not held (held.max.bytes 0): their trees fail back a message
    # timeout (2 s here) after they were dropped, although message timeouts are off.
    out = tmp_path / "out"
    options = ["-o", f"test.out={out}", "-o", "topology.message.timeout.secs=2"]
    if held == "dropped":
        options += ["-o", "heronbridge.held.max.bytes=0"]

    def spout_events() -> list[dict]:
        return [r for rs in read_jsonl(out, "spout-*.jsonl").values() for r in rs]

    # Stopped (Ctrl-C, as a user stops it) once every tuple is acked, when no tree is
    # left to ack or fail; -t only bounds a run that never gets there.
    # Its output goes to files, which nothing has to drain while it runs (its processes
    # write there too).
    said, errors = tmp_path / "run.out", tmp_path / "run.err"
    with said.open("w") as stdout, errors.open("w") as stderr:
        run = subprocess.Popen([HERONBRIDGE, "run", str(TOPOLOGY), "-t", "60", "--home",
                                str(tmp_path / "hb"), *options], stdout=stdout, stderr=stderr)
    try:
        while run.poll() is None and {r["seq"] for r in spout_events() if r["event"] == "ack"} \
                != set(range(COUNT)):
            time.sleep(0.2)
    finally:
        run.send_signal(signal.SIGINT)
        run.wait(120)
    done = subprocess.CompletedProcess(run.args, run.returncode, said.read_text(),
                                       errors.read_text())
    assert done.returncode == 0, done.stderr
    events = spout_events()
    acked = {r["seq"] for r in events if r["event"] == "ack"}
    failed = {r["seq"] for r in events if r["event"] == "fail"}
    assert (out / "died").exists()  # the bolt task died and was restarted
    assert acked == set(range(COUNT)), f"never acked: {sorted(set(range(COUNT)) - acked)}"
    row = next(line for line in done.stdout.splitlines() if STMGR in line)
    dropped = int(row.split("│")[-3].strip().replace(",", ""))
    if held == "held":
        assert failed == {100}, sorted(failed)  # failed by the dying task
        assert dropped == 0, done.stdout
    else:
        assert len(failed) > 1  # seq 100, and the dropped ones
        assert dropped > 0, done.stdout
        assert "frames for tasks that were down" in done.stdout
