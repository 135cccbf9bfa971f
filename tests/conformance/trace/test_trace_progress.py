"""Reading a run's progress from trace files that are still being written."""

from __future__ import annotations

import json
import time
from pathlib import Path

from heronbridge.conformance.trace.progress import Progress


def line(ev: str, component: str = "spout", task: int = 4, t: float | None = None,
         **fields) -> str:
    record = {"t": time.time() if t is None else t, "seq": 0, "ev": ev,
              "component": component, "task": task, **fields}
    return json.dumps(record) + "\n"


def append(path: Path, text: str) -> None:
    with path.open("a") as f:
        f.write(text)


def test_half_written_lines_wait_for_their_end_and_new_files_are_found(tmp_path):
    progress = Progress(tmp_path / "traces")
    empty = progress.poll()  # the folder does not exist yet
    assert (empty.records, empty.files, empty.done(0)) == (0, 0, False)
    (tmp_path / "traces").mkdir()
    spout = tmp_path / "traces" / "spout-4-100.jsonl"
    whole = line("start", pid=100) + line("emit", msg_id="1", stream="default")
    append(spout, whole + line("emit", msg_id="2")[:20])
    snap = progress.poll()
    assert (snap.records, snap.pending, snap.files) == (2, 1, 1)
    append(spout, line("emit", msg_id="2")[20:])
    bolt = tmp_path / "traces" / "counter-2-101.jsonl"
    append(bolt, line("start", "counter", 2, pid=101) + line("recv", "counter", 2, id="9"))
    snap = progress.poll()
    assert (snap.records, snap.pending, snap.files) == (5, 2, 2)
    assert snap.per_component == {"spout": {"start": 1, "emit": 2},
                                  "counter": {"start": 1, "recv": 1}}
    assert progress.poll().records == 5  # nothing is read twice


def test_pending_follows_each_message_s_latest_event(tmp_path):
    path = tmp_path / "spout-4-1.jsonl"
    t0 = time.time() - 10
    append(path, line("emit", msg_id="1", t=t0) + line("emit", msg_id="2", t=t0 + 1)
           + line("emit", msg_id=None, t=t0 + 1) + line("spout_fail", msg_id="1", t=t0 + 2))
    progress = Progress(tmp_path)
    snap = progress.poll()
    assert snap.pending == 1 and snap.pending_ids == [("spout", 4, "2")]
    append(path, line("emit", msg_id="1", t=t0 + 3))  # a replay
    assert progress.poll().pending == 2
    append(path, line("spout_ack", msg_id="1", t=t0 + 4) + line("spout_ack", msg_id="2",
                                                                  t=t0 + 4))
    snap = progress.poll()
    assert snap.pending == 0
    assert 5.5 < snap.quiet_for < 30
    assert snap.done(5) and not snap.done(60)


def test_the_same_message_id_of_another_task_is_another_message(tmp_path):
    append(tmp_path / "spout-4-1.jsonl", line("emit", msg_id="1"))
    append(tmp_path / "spout-5-2.jsonl", line("emit", task=5, msg_id="1")
           + line("spout_ack", task=5, msg_id="1"))
    assert Progress(tmp_path).poll().pending == 1


def test_ticks_and_their_acks_are_not_activity(tmp_path):
    old = time.time() - 20
    path = tmp_path / "counter-2-1.jsonl"
    append(path, line("recv", "counter", 2, t=old, id="1", src="spout"))
    append(path, line("recv", "counter", 2, id="7", src="__system", stream="__tick")
           + line("ack", "counter", 2, id="7", injected=False))
    snap = Progress(tmp_path).poll()
    assert snap.records == 3
    assert snap.quiet_for >= 19
    append(path, line("ack", "counter", 2, id="1", injected=False))
    progress = Progress(tmp_path)
    assert progress.poll().quiet_for < 5


def test_exits_errors_and_bad_lines_are_counted(tmp_path):
    append(tmp_path / "counter-2-1.jsonl", line("exit", "counter", 2, reason="x")
           + "not json\n" + line("error", "counter", 2, msg="boom") + "[1]\n")
    snap = Progress(tmp_path).poll()
    assert (snap.exits, snap.errors, snap.bad_lines, snap.records) == (1, 1, 2, 2)
    assert "1 exits" in snap.summary() and "counter: error 1, exit 1" in snap.summary()


def test_the_first_emit_is_the_earliest_in_any_file(tmp_path):
    t0 = time.time() - 10
    append(tmp_path / "spout-4-1.jsonl", line("start", t=t0) + line("emit", t=t0 + 3))
    progress = Progress(tmp_path)
    assert progress.poll().first_emit == t0 + 3
    append(tmp_path / "bolt-2-2.jsonl", line("recv", "bolt", 2, t=t0 + 1)
           + line("emit", "bolt", 2, t=t0 + 2) + line("emit", "bolt", 2, t=t0 + 5))
    assert progress.poll().first_emit == t0 + 2
