"""The stateful_wordcount example under EFFECTIVELY_ONCE on the local runtime: its
counting task SIGKILLed once a checkpoint is complete, the topology rolled back, and
every word counted exactly."""

from __future__ import annotations

import os
import re
import signal
import time

import pytest
from test_state import EXAMPLE, final_counts, records, words
from testkit import read_jsonl, wait_until

from heronbridge.runtime.statemgr import STATEFUL_CHECKPOINTS

pytestmark = pytest.mark.integration


def starts(out) -> dict[str, list[dict]]:
    """Each counting task's start records, by file (count-<task>)."""
    return {name: [r for r in rows if r.get("event") == "start"]
            for name, rows in read_jsonl(out, "count-*.jsonl").items()}


@pytest.mark.compat("api/stateful bolts", "config/heronbridge.checkpoint.root",
                    "config/topology.stateful.checkpoint.interval.secs")
def test_a_killed_counting_task_rolls_back_and_every_word_counts_once(run_project, state,
                                                                      tmp_path):
    out, rounds = tmp_path / "out", 10
    want = words(rounds)
    options = {"example.output.dir": str(out), "stateful_wordcount.rounds": rounds,
               "stateful_wordcount.lines_per_sec": 200,
               "topology.stateful.checkpoint.interval.secs": 1,
               "heronbridge.checkpoint.root": str(tmp_path / "checkpoints"),
               "heronbridge.restart.backoff.secs": 0.1}
    with run_project(EXAMPLE, options=options) as running:
        def consistent() -> list[str]:
            node = state.get(STATEFUL_CHECKPOINTS, "stateful_wordcount")
            return list(node.checkpoint_ids) if node is not None else []

        first = wait_until(consistent, 60, "a consistent checkpoint", on_timeout=running.logs)
        first_task, second_task = sorted(starts(out))
        victim = starts(out)[first_task][-1]["pid"]
        assert final_counts(out) != want, "the input ended before a checkpoint completed"
        os.kill(victim, signal.SIGKILL)
        wait_until(lambda: final_counts(out) == want, 90, "exact counts after the rollback",
                   interval=0.2, on_timeout=running.logs)
        wait_until(lambda: consistent()[0] > first[0], 30, "a checkpoint after the rollback")
        assert final_counts(out) == want  # nothing counted twice since
        logs = running.logs()
    rollbacks = logs.count("topology 'stateful_wordcount': rolling back to")
    assert rollbacks >= 2, logs  # at the start, and after the kill
    # The spout went back to the checkpoint's offset; the counters to its counts.
    offsets = [r["offset"] for r in records(out, "lines")]
    assert len(offsets) == rollbacks and offsets[0] == 0 and max(offsets[1:]) > 0
    # Each counting task started once per rollback, the last time with the checkpoint's
    # counts: the killed one in a new process, the other rebuilt in its own.
    killed, other = starts(out)[first_task], starts(out)[second_task]
    assert len(killed) == len(other) == rollbacks
    assert killed[-1]["pid"] != victim and killed[-1]["restored"] > 0
    assert other[-1]["pid"] == other[0]["pid"] and other[-1]["restored"] > 0
    # The tasks rebuilt in their own process left no pystorm log handler behind: the
    # runtime's records are never sent through a dropped component's.
    assert " - heronbridge." not in logs, logs


@pytest.mark.compat("config/heronbridge.checkpoint.buffer.bytes")
def test_a_checkpoint_whose_alignment_holds_more_than_the_buffer_is_given_up(run_project,
                                                                            tmp_path):
    """No byte of buffer: a counting task that holds tuples from one splitter while it
    waits for the other's marker gives the checkpoint up and runs them at once, and tells
    the master, which starts the next at its interval rather than after a minute."""
    # Lines flow all along (a bounded input could end before the first checkpoint on a
    # loaded machine: then no alignment holds anything).
    options = {"example.output.dir": str(tmp_path / "out"),
               "stateful_wordcount.rounds": 10**6,
               "stateful_wordcount.lines_per_sec": 200,
               "topology.stateful.checkpoint.interval.secs": 0.5,
               "heronbridge.checkpoint.root": str(tmp_path / "checkpoints"),
               "heronbridge.checkpoint.buffer.bytes": 0}
    started = re.compile(r"component 'split', task \d+: started \(incarnation \d+, pid (\d+)\)")
    given_up = "more than heronbridge.checkpoint.buffer.bytes (0)"
    with run_project(EXAMPLE, options=options) as running:
        found = wait_until(lambda: started.search(running.logs()), 60, "a splitter's start",
                           on_timeout=running.logs)
        splitter = int(found.group(1))
        # Both splitters get each marker from the one spout at once, so on an idle machine
        # their markers reach the counters back to back, with nothing between to hold.
        # One splitter stopped for a while holds back its marker: the counters then hold
        # the other's tuples until it comes.
        deadline = time.monotonic() + 60
        while given_up not in running.logs() and time.monotonic() < deadline:
            os.kill(splitter, signal.SIGSTOP)
            time.sleep(1.5)
            os.kill(splitter, signal.SIGCONT)
            time.sleep(1.0)
        master = running.workdir / "container-0" / "logs" / "topology-master.log"

        def next_after_given_up() -> bool:
            ends = re.findall(r"checkpoint (\d+) (given up by task|consistent)",
                              master.read_text())
            first = next((i for i, (_, how) in enumerate(ends) if how != "consistent"), None)
            return first is not None and any(c > ends[first][0] for c, _ in ends[first:])

        # The master's round timeout is a minute: a later checkpoint ending well within it
        # (consistent, or given up too on a loaded machine, as no byte is buffered) was
        # started at its interval, once the task's report ended the round.
        wait_until(next_after_given_up, 30, "a later checkpoint after one was given up",
                   on_timeout=lambda: master.read_text()[-3000:])
        logs = running.logs()
    assert given_up in logs, logs[-3000:]
    assert re.search(r"checkpoint \S+ given up: [1-9]\d* bytes held while markers aligned",
                     logs), logs[-3000:]
