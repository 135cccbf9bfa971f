"""Frames dropped for a task that is down: the trees of their tuples fail back to their
spouts at once (with message timeouts off they would otherwise stay pending forever),
and `run` shows how many were dropped."""

from __future__ import annotations

import subprocess
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


@pytest.mark.integration
def test_trees_of_dropped_frames_fail_back_even_without_message_timeouts(tmp_path):
    out = tmp_path / "out"
    done = subprocess.run([HERONBRIDGE, "run", str(TOPOLOGY), "-t", "8", "--home",
                           str(tmp_path / "hb"), "-o", f"test.out={out}"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    events = [r for rs in read_jsonl(out, "spout-*.jsonl").values() for r in rs]
    acked = {r["seq"] for r in events if r["event"] == "ack"}
    failed = {r["seq"] for r in events if r["event"] == "fail"}
    assert (out / "died").exists()  # the bolt task died and was restarted
    assert len(failed) > 1  # seq 100, failed by the dying task, and dropped ones
    assert acked == set(range(COUNT)), f"never acked: {sorted(set(range(COUNT)) - acked)}"
    row = next(line for line in done.stdout.splitlines() if STMGR in line)
    assert int(row.split("│")[-3].strip().replace(",", "")) > 0, done.stdout
    assert "frames for tasks that were down" in done.stdout
