"""The heronpy stateful word count on the runtime, effectively once: its counting task
SIGKILLed after a checkpoint completed, every word's final count exact."""

from __future__ import annotations

import json
import os
import re
import signal
from collections import Counter
from pathlib import Path

import pytest
from testkit import wait_until

from heronbridge.compat.heronpy.loader import heron_options, load_file
from heronbridge.runtime.plan.tasks import TaskLayout
from heronbridge.runtime.statemgr import STATEFUL_CHECKPOINTS

pytestmark = pytest.mark.integration

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "heronpy" / "stateful_wordcount.py"
LINES = 3000


def reports(out: Path) -> dict[int, dict]:
    """{count task: its last report}"""
    found = {}
    for path in out.glob("counts-*.json"):
        report = json.loads(path.read_text())
        found[report["task"]] = report
    return found


def counted(out: Path) -> Counter:
    counts: Counter = Counter()
    for report in reports(out).values():
        counts.update(report["counts"])
    return counts


def written_again(out: Path) -> None:
    since = {p: p.stat().st_mtime_ns for p in out.glob("counts-*.json")}
    wait_until(lambda: all(p.stat().st_mtime_ns > t for p, t in since.items()), 10,
               "the counts written again")


@pytest.mark.compat("heronpy/stateful components")
def test_killing_the_counting_task_after_a_checkpoint_leaves_every_count_exact(
        run_topology, tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLE.parent))
    with heron_options(str(tmp_path)):  # the module defines a Topology: heronpy needs it
        from stateful_wordcount import expected_counts

    out = tmp_path / "out"
    out.mkdir()
    plan = load_file(EXAMPLE, options={
        "wordcount.out": str(out), "wordcount.lines": LINES, "wordcount.rate": 400,
        "topology.stateful.checkpoint.interval.secs": 1,
        "heronbridge.checkpoint.root": str(tmp_path / "checkpoints"),
        "heronbridge.restart.backoff.secs": 0.2})
    victim = TaskLayout.of(plan).component_tasks["count"][0]
    expected = expected_counts(LINES)
    with run_topology(plan) as running:
        def consistent():
            found = running.statemgr.get(STATEFUL_CHECKPOINTS, plan.name)
            return list(found.checkpoint_ids) if found is not None else []

        first = wait_until(lambda: reports(out).get(victim), 60, "the counting task's counts",
                           on_timeout=running.logs)
        wait_until(consistent, 30, "a consistent checkpoint", on_timeout=running.logs)
        assert sum(counted(out).values()) < sum(expected.values())  # killed mid-stream
        os.kill(first["pid"], signal.SIGKILL)
        wait_until(lambda: reports(out)[victim]["pid"] != first["pid"], 60,
                   "the counting task to come back", on_timeout=running.logs)
        wait_until(lambda: counted(out) == expected, 90, "every word counted exactly",
                   on_timeout=lambda: f"{counted(out) - expected=}\n{running.logs()}")
        written_again(out)  # each count task writes its counts every second: two more
        written_again(out)  # rounds, still exact
        final = counted(out)
        logs = running.logs()
    # "rolling back to <checkpoint> (txid <n>): <why>", once per rollback in each log
    rollbacks = dict(re.findall(r"rolling back to (.+?\(txid \d+\))(.*)", logs))
    print(f"{len(rollbacks)} rollbacks:", *(f"{k}{v}" for k, v in rollbacks.items()),
          sep="\n  ")
    assert final == expected
    assert len(rollbacks) >= 2, logs  # the first start's, then the kill's
    # The spout rewound to the offset a checkpoint held (a topology that lost its state
    # would also count exactly here, by reading everything again from line 0).
    starts = re.findall(r"reading from line (\d+) of", logs)
    assert starts[0] == "0" and any(int(n) > 0 for n in starts[1:]), starts
