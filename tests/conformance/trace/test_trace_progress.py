"""Reading a run's progress from the heads of trace files that are still being written."""

from __future__ import annotations

import time
from pathlib import Path

from heronbridge.conformance.trace import schema, tracefile
from heronbridge.conformance.trace.hook import TraceHook
from heronbridge.conformance.trace.progress import STARTING_SECS, Progress

TASKS = {"counter": [2, 3], "spout": [4, 5]}


def writer(folder: Path, component: str, task: int, pid: int, t: float | None = None,
           spout: bool = False) -> tracefile.Writer:
    folder.mkdir(parents=True, exist_ok=True)
    return tracefile.Writer(folder / tracefile.file_name(component, task, pid),
                            {"component": component, "task": task, "pid": pid,
                             "t": time.time() if t is None else t, "spout": spout,
                             "tasks": TASKS})


def block(w: tracefile.Writer, totals: dict, **head) -> None:
    n = sum(totals.values())
    rows = [[time.time(), tracefile.CODE[schema.RECV]]] * n
    w.block({"n": n, "seq": 0, "t1": time.time(), "active": time.time(), "totals": totals,
             **head}, rows)


def test_frames_are_read_once_complete_and_new_files_are_found(tmp_path):
    progress = Progress(tmp_path / "traces")
    empty = progress.poll()  # the folder does not exist yet
    assert (empty.records, empty.files, empty.done(0)) == (0, 0, False)
    spout = writer(tmp_path / "traces", "spout", 4, 100, spout=True)
    block(spout, {"start": 1, "emit": 1}, pending=1, pending_ids=["1"])
    spout._write(tracefile.FRAME.pack(1, 2) + b"\x80")  # a frame half written
    snap = progress.poll()
    assert (snap.records, snap.pending, snap.files, snap.spout_tasks) == (2, 1, 1, 1)
    assert snap.pending_ids == [("spout", 4, "1")]
    spout._write(b"\x91\x90")  # ... and its rest
    block(spout, {"start": 1, "emit": 2}, pending=2)
    block(writer(tmp_path / "traces", "counter", 2, 101), {"start": 1, "recv": 1})
    snap = progress.poll()
    assert (snap.records, snap.pending, snap.files, snap.bad_files) == (5, 2, 2, 0)
    assert snap.per_component == {"counter": {"start": 1, "recv": 1},
                                  "spout": {"start": 1, "emit": 2}}
    assert snap.bytes == sum(p.stat().st_size for p in (tmp_path / "traces").iterdir())
    assert "5 trace records (" in snap.line()
    assert progress.poll().records == 5  # nothing is counted twice


def test_a_restarted_task_s_earlier_file_pends_nothing(tmp_path):
    old = writer(tmp_path, "spout", 4, 1, t=100.0, spout=True)
    block(old, {"emit": 3}, pending=3)
    new = writer(tmp_path, "spout", 4, 2, t=200.0, spout=True)
    block(new, {"emit": 1}, pending=1)
    other = writer(tmp_path, "spout", 5, 3, t=100.0, spout=True)
    block(other, {"emit": 1}, pending=1)
    snap = Progress(tmp_path).poll()
    # Two spout tasks, one of which ran in two processes: restarted once.
    assert (snap.pending, snap.records, snap.spout_tasks) == (2, 5, 2)
    assert snap.restarts == {("spout", 4): 1}


def test_a_crash_looping_spout_is_one_task_restarted_and_injected_exits_are_no_crash(
        tmp_path):
    """`conform` said '0 of 5 spout tasks' of a topology with one spout task, whose
    process had crashed four times; a task an exit fault ended is not a crash."""
    for pid in range(5):
        block(writer(tmp_path, "spout", 4, pid, t=100.0 + pid, spout=True), {"emit": 2})
    block(writer(tmp_path, "counter", 2, 10, t=100.0), {"recv": 3, "exit": 1})
    block(writer(tmp_path, "counter", 2, 11, t=101.0), {"recv": 1})
    snap = Progress(tmp_path).poll()
    assert (snap.spout_tasks, snap.stopped) == (1, 0)
    assert snap.restarts == {("spout", 4): 4}
    assert snap.exited == {("counter", 2): 1}
    assert "0 of 1 spout tasks stopped" in snap.line()


def test_quiet_follows_the_latest_activity_and_ends_the_run_with_nothing_pending(tmp_path):
    block(writer(tmp_path, "spout", 4, 1, t=time.time() - 20, spout=True), {"emit": 1},
          active=time.time() - 15)
    w = writer(tmp_path, "counter", 2, 2, t=time.time() - 20)
    block(w, {"recv": 1}, active=time.time() - 10)
    snap = Progress(tmp_path).poll()
    assert 9.5 < snap.quiet_for < 30
    assert snap.done(5) and not snap.done(60)


def test_a_run_whose_spouts_have_not_emitted_yet_is_not_over_after_the_quiet_time(tmp_path):
    """An effectively-once run's first rollback took 5 s on a loaded machine, longer than
    its scenario's quiet time: it was judged over with its tasks started and no emit."""
    spout = writer(tmp_path, "spout", 4, 1, t=time.time() - 20, spout=True)
    block(spout, {"start": 1}, active=time.time() - 10)
    block(writer(tmp_path, "counter", 2, 2, t=time.time() - 20), {"start": 1},
          active=time.time() - 10)
    progress = Progress(tmp_path)
    snap = progress.poll()
    assert snap.quiet_for > 9.5 and not snap.done(5)
    block(spout, {"start": 1}, active=time.time() - 40, stopped={"emits": 0})
    assert progress.poll().done(5)  # a spout the run's bound stopped before it emitted
    block(writer(tmp_path, "spout", 5, 3, t=time.time() - 60, spout=True), {"start": 1},
          active=time.time() - 40)
    assert not progress.poll().done(5)  # ... but not every spout was stopped

    idle = tmp_path / "idle"
    block(writer(idle, "spout", 4, 1, t=time.time() - 60, spout=True), {"start": 1},
          active=time.time() - STARTING_SECS - 5)
    assert Progress(idle).poll().done(5)  # so long quiet after the start: nothing to come


def test_a_task_an_exit_ended_holds_the_run_until_it_is_started_again(tmp_path):
    """A stateful run went quiet while its killed task restarted and every task rolled
    back, slower than the quiet time on a loaded machine: it was judged over too soon."""
    long_ago = time.time() - 60
    block(writer(tmp_path, "counter", 2, 1, t=long_ago), {"recv": 3, "exit": 1},
          active=long_ago)
    progress = Progress(tmp_path)
    snap = progress.poll()
    assert snap.awaiting == 1 and snap.quiet_for > 50 and not snap.done(5)
    writer(tmp_path, "counter", 2, 2)  # its new process, nothing traced yet
    snap = progress.poll()
    assert snap.awaiting == 0 and snap.quiet_for < 5 and not snap.done(5)


def test_ticks_and_their_acks_are_not_activity(tmp_path, monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr("heronbridge.conformance.trace.hook._now", lambda: clock[0])
    hook = TraceHook({schema.TRACE_DIR: str(tmp_path)})
    hook.down({"pidDir": "/nowhere", "conf": {}, "context": {
        "task->component": {"2": "counter", "4": "spout"}, "taskid": 2,
        "componentid": "counter", "source->stream->grouping": {"spout": {}}}})
    hook.up({"pid": 1})
    hook.down({"id": "1", "comp": "spout", "stream": "default", "task": 4, "tuple": [1]})
    clock[0] += 20
    hook.down({"id": "7", "comp": "__system", "stream": "__tick", "task": -1, "tuple": [1]})
    hook.up({"command": "ack", "id": "7"})
    hook.flush()
    progress = Progress(tmp_path)
    snap = progress.poll()
    assert snap.records == 4
    assert snap.quiet_for >= time.time() - 1000.0 - 1
    clock[0] += 1
    hook.up({"command": "ack", "id": "1"})
    hook.close()
    assert progress.poll().quiet_for >= time.time() - 1021.0 - 1


def test_exits_errors_and_bad_files_are_counted(tmp_path):
    block(writer(tmp_path, "counter", 2, 1), {"exit": 1, "error": 1})
    (tmp_path / f"counter-3-2{tracefile.SUFFIX}").write_bytes(b"not a trace file")
    progress = Progress(tmp_path)
    snap = progress.poll()
    assert (snap.exits, snap.errors, snap.bad_files, snap.records) == (1, 1, 1, 2)
    assert "1 exits" in snap.summary() and "counter: error 1, exit 1" in snap.summary()
    assert progress.exits() == [("counter", 2)]


def test_the_first_emit_is_the_earliest_in_any_file(tmp_path):
    t0 = time.time() - 10
    block(writer(tmp_path, "spout", 4, 1, spout=True), {"emit": 1}, first_emit=t0 + 3)
    progress = Progress(tmp_path)
    assert progress.poll().first_emit == t0 + 3
    block(writer(tmp_path, "bolt", 2, 2), {"emit": 2}, first_emit=t0 + 2)
    assert progress.poll().first_emit == t0 + 2


def test_spouts_still_emitting_at_the_time_limit_are_named_with_the_way_out(tmp_path):
    spout = writer(tmp_path, "spout", 4, 1, spout=True)
    block(spout, {"emit": 1_000}, last_emit=time.time())
    block(writer(tmp_path, "spout", 5, 2, spout=True), {"emit": 900},
          last_emit=time.time() - 60, stopped={"emits": 900, "reason": "tuples"})
    progress = Progress(tmp_path)
    snap = progress.poll()
    assert snap.still_emitting
    assert "still emitting" in snap.endless() and "--tuples N" in snap.endless()
    assert "1,900 emits so far, 1 of 2 spout tasks stopped" in snap.endless()
    assert progress.stops() == {"spout": {1: 900}}
    block(spout, {"emit": 1_000}, last_emit=time.time() - 60)
    assert progress.poll().endless() == ""
