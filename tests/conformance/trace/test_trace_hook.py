"""The tracing hook over synthetic multilang message sequences, as Storm's side and a
pystorm component would exchange them."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from heronbridge.conformance import ConformanceError
from heronbridge.conformance.trace import schema, seed, tracefile
from heronbridge.conformance.trace.hook import TraceHook

TASKS = {"__acker": [1], "counter": [2, 3], "spout": [4]}
PID = 4242


def handshake(component: str, task: int, conf: dict | None = None,
              sources: dict | None = None) -> dict:
    return {"pidDir": "/nowhere",
            "conf": {"topology.name": "demo", **(conf or {})},
            "context": {"task->component": {str(t): c for c, ts in TASKS.items() for t in ts},
                        "taskid": task, "componentid": component,
                        "source->stream->grouping": sources if sources is not None else
                        {"spout": {"default": {"type": "SHUFFLE"}}}}}


def spout_handshake(conf: dict | None = None) -> dict:
    # Storm shows a spout the ackers' streams as its sources
    return handshake("spout", 4, conf, {"__acker": {"__ack_ack": {"type": "DIRECT"}}})


def tup(tup_id: str, values: list, comp: str = "spout", stream: str = "default",
        task: int = 4) -> dict:
    return {"id": tup_id, "comp": comp, "stream": stream, "task": task, "tuple": values}


HEARTBEAT = {"id": "-77", "comp": None, "stream": "__heartbeat", "task": -1, "tuple": []}


def tick(tup_id: str) -> dict:
    return tup(tup_id, [1], comp="__system", stream="__tick", task=-1)


def started(tmp_path: Path, hs: dict, faults: list | None = None, **kw) -> TraceHook:
    conf = {schema.TRACE_DIR: str(tmp_path)}
    if faults is not None:
        conf[schema.FAULTS] = faults
    hook = TraceHook(conf, **kw)
    assert hook.down(hs) == ([hs], [])
    assert hook.up({"pid": PID}) == [{"pid": PID}]
    return hook


def records(hook: TraceHook, folder: Path, name: str) -> list[dict]:
    """The records of trace file `name` (without its suffix), once `hook` has written
    what it holds."""
    hook.flush()
    return list(tracefile.read(folder / f"{name}{tracefile.SUFFIX}"))


def test_bolt_messages_become_records_and_pass_through_unchanged(tmp_path):
    hook = started(tmp_path, handshake("counter", 3))
    t1 = tup("11", ["a", {"z": 1, "b": [2]}])
    assert hook.down(t1) == ([t1], [])
    assert hook.down(HEARTBEAT) == ([HEARTBEAT], [])
    assert hook.up({"command": "sync"}) == [{"command": "sync"}]
    assert hook.down(tick("12")) == ([tick("12")], [])
    emit = {"command": "emit", "anchors": ["11"], "tuple": ["a", 1]}  # asks for task ids
    assert hook.up(emit) == [emit]
    quiet = {"command": "emit", "anchors": "11", "stream": "s", "tuple": ["b"],
             "need_task_ids": False}
    hook.up(quiet)
    direct = {"command": "emit", "anchors": [], "tuple": ["c"], "task": 9}
    hook.up(direct)
    assert hook.down([2, 3]) == ([[2, 3]], [])
    hook.up({"command": "ack", "id": "11"})
    hook.up({"command": "ack", "id": "12"})
    hook.up({"command": "fail", "id": "99"})
    hook.up({"command": "log", "msg": "hello", "level": 2})
    hook.up({"command": "error", "msg": "boom"})
    got = records(hook, tmp_path, f"counter-3-{PID}")
    assert [r["seq"] for r in got] == list(range(len(got)))
    assert all(r["component"] == "counter" and r["task"] == 3 for r in got)
    strip = [{k: v for k, v in r.items() if k not in ("t", "seq", "component", "task")}
             for r in got]
    assert strip == [
        {"ev": "start", "pid": PID, "tasks": TASKS},
        {"ev": "recv", "id": "11", "src": "spout", "stream": "default", "src_task": 4,
         "values": '["a",{"b":[2],"z":1}]'},
        {"ev": "recv", "id": "12", "src": "__system", "stream": "__tick", "src_task": -1,
         "values": "[1]"},
        # written when its targets came, after the emits that asked for none
        {"ev": "emit", "stream": "s", "values": '["b"]', "anchors": ["11"], "direct": None,
         "msg_id": None, "targets": None},
        {"ev": "emit", "stream": "default", "values": '["c"]', "anchors": [], "direct": 9,
         "msg_id": None, "targets": None},
        {"ev": "emit", "stream": "default", "values": '["a",1]', "anchors": ["11"],
         "direct": None, "msg_id": None, "targets": [2, 3]},
        {"ev": "ack", "id": "11", "injected": False},
        {"ev": "ack", "id": "12", "injected": False},
        {"ev": "fail", "id": "99", "injected": False},
        {"ev": "error", "msg": "boom"},
    ]
    times = [r["t"] for r in got]
    assert times[5] <= times[3]  # an emit keeps the time it was made


def test_task_id_replies_go_to_the_emits_that_asked_in_order(tmp_path):
    hook = started(tmp_path, handshake("counter", 2))
    for n in range(3):
        hook.up({"command": "emit", "tuple": [n], "anchors": []})
    for targets in ([2], [3], [2, 3]):
        hook.down(targets)
    emits = [r for r in records(hook, tmp_path, f"counter-2-{PID}") if r["ev"] == "emit"]
    assert [(r["values"], r["targets"]) for r in emits] == \
        [("[0]", [2]), ("[1]", [3]), ("[2]", [2, 3])]


def test_spout_commands_and_reliable_emits(tmp_path):
    hook = started(tmp_path, spout_handshake())
    for cmd in ({"command": "activate", "id": ""}, {"command": "next", "id": ""}):
        assert hook.down(cmd) == ([cmd], [])
    hook.up({"command": "emit", "tuple": [7], "id": 7, "need_task_ids": False})
    hook.up({"command": "emit", "tuple": ["x"], "id": {"k": ["v"]}})
    hook.down([2])
    hook.up({"command": "emit", "tuple": [8], "need_task_ids": False})  # unreliable
    hook.up({"command": "sync"})
    hook.down({"command": "ack", "id": 7})
    hook.down({"command": "fail", "id": {"k": ["v"]}})
    hook.down({"command": "deactivate", "id": ""})
    got = records(hook, tmp_path, f"spout-4-{PID}")
    assert [(r["ev"], r.get("msg_id"), r.get("targets")) for r in got] == [
        ("start", None, None), ("activate", None, None), ("emit", "7", None),
        ("emit", '{"k":["v"]}', [2]), ("emit", None, None), ("spout_ack", "7", None),
        ("spout_fail", '{"k":["v"]}', None), ("deactivate", None, None)]
    assert all(r["anchors"] == [] for r in got if r["ev"] == "emit")


def test_options_missing_from_the_handshake_come_from_the_hook_conf(tmp_path):
    hook = TraceHook({schema.TRACE_DIR: str(tmp_path),
                      schema.FAULTS: [{"component": "counter", "kind": "drop", "every": 1}]})
    hook.down(handshake("counter", 2))
    hook.up({"pid": 5})
    assert hook.down(tup("1", [1])) == ([], [])
    assert [r["ev"] for r in records(hook, tmp_path, "counter-2-5")] == \
        ["start", "recv", "drop"]


def test_fail_fault_fails_every_nth_input_tuple_ticks_and_heartbeats_aside(tmp_path):
    faults = [{"component": "counter", "task_index": None, "kind": "fail", "every": 3}]
    hook = started(tmp_path, handshake("counter", 2), faults)
    delivered, back = [], []
    for n in range(1, 8):
        for msg in (tup(str(n), [n]), tick(f"t{n}"), HEARTBEAT):
            mine, answer = hook.down(msg)
            delivered += [m["id"] for m in mine]
            back += answer
    assert [m for m in delivered if not m.startswith(("t", "-"))] == ["1", "2", "4", "5", "7"]
    assert back == [{"command": "fail", "id": "3"}, {"command": "fail", "id": "6"}]
    got = records(hook, tmp_path, f"counter-2-{PID}")
    injected = [(r["ev"], r["id"]) for r in got if r.get("injected")]
    assert injected == [("fail", "3"), ("fail", "6")]
    evs = [(r["ev"], r.get("id")) for r in got]
    assert evs.index(("recv", "3")) + 1 == evs.index(("fail", "3"))


def test_drop_fault_swallows_every_nth_and_answers_nothing(tmp_path):
    faults = [{"component": "counter", "kind": "drop", "every": 2}]
    hook = started(tmp_path, handshake("counter", 2), faults)
    results = [hook.down(tup(str(n), [n])) for n in range(1, 5)]
    assert [len(mine) for mine, _ in results] == [1, 0, 1, 0]
    assert all(back == [] for _, back in results)
    got = records(hook, tmp_path, f"counter-2-{PID}")
    assert [(r["ev"], r.get("id")) for r in got if r["ev"] in ("recv", "drop")] == \
        [("recv", "1"), ("recv", "2"), ("drop", "2"), ("recv", "3"), ("recv", "4"),
         ("drop", "4")]


def test_a_fault_with_a_task_index_applies_to_that_task_only(tmp_path):
    faults = [{"component": "counter", "task_index": 1, "kind": "drop", "every": 1}]
    first = started(tmp_path / "a", handshake("counter", 2), faults)
    second = started(tmp_path / "b", handshake("counter", 3), faults)
    assert first.down(tup("1", [1]))[0] != []
    assert second.down(tup("1", [1]))[0] == []


class Exited(Exception):
    pass


def test_exit_fault_records_flushes_and_ends_the_process_once_per_task(tmp_path):
    faults = [{"component": "counter", "kind": "exit", "after": 2}]
    calls = []

    def exit_process() -> None:
        calls.append(True)
        raise Exited

    hook = started(tmp_path, handshake("counter", 2), faults, exit_process=exit_process)
    hook.up({"command": "emit", "tuple": [0], "anchors": []})  # its targets never come
    for n in (1, 2):
        hook.down(tup(str(n), [n]))
    assert calls == []
    with pytest.raises(Exited):
        hook.down(HEARTBEAT)
    got = records(hook, tmp_path, f"counter-2-{PID}")
    assert [r["ev"] for r in got] == ["start", "recv", "recv", "exit", "emit"]
    assert got[-1]["targets"] is None
    # the restarted task (a new process) keeps running
    again = TraceHook({schema.TRACE_DIR: str(tmp_path), schema.FAULTS: faults},
                      exit_process=exit_process)
    again.down(handshake("counter", 2))
    again.up({"pid": PID + 1})
    for n in range(3, 9):
        assert again.down(tup(str(n), [n]))[0]
    assert calls == [True]


def test_exit_fault_counts_tuples_handed_on_and_records_the_one_that_ends_it(tmp_path):
    faults = [{"component": "counter", "kind": "drop", "every": 2},
              {"component": "counter", "kind": "exit", "after": 2}]
    hook = started(tmp_path, handshake("counter", 2), faults,
                   exit_process=lambda: (_ for _ in ()).throw(Exited))
    for n in (1, 2, 3):  # 2 is dropped: only 1 and 3 reach the component
        hook.down(tup(str(n), [n]))
    with pytest.raises(Exited):
        hook.down(tup("4", [4]))
    got = records(hook, tmp_path, f"counter-2-{PID}")
    assert [(r["ev"], r.get("id")) for r in got][-2:] == [("recv", "4"), ("exit", None)]


def test_without_a_trace_dir_nothing_is_written_but_faults_still_apply(tmp_path,
                                                                        monkeypatch):
    monkeypatch.chdir(tmp_path)
    hook = TraceHook({schema.FAULTS: [{"component": "counter", "kind": "fail", "every": 1}]})
    hook.down(handshake("counter", 2))
    hook.up({"pid": 1})
    hook.up({"command": "emit", "tuple": [1]})
    assert hook.down([2]) == ([[2]], [])
    assert hook.down(tup("5", [5])) == ([], [{"command": "fail", "id": "5"}])
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("fault", "expected"), [
    ({"component": "spout", "kind": "fail", "every": 2}, "'spout', a spout"),
    ({"component": "nope", "kind": "fail", "every": 2}, "component 'nope'"),
    ({"component": "__acker", "kind": "drop", "every": 2}, "component '__acker'"),
    ({"component": "counter", "kind": "explode", "every": 2}, "kind among"),
    ({"component": "counter", "kind": "fail", "every": 0}, "'every' to be a whole number"),
    ({"component": "counter", "kind": "exit", "every": 3}, "'after' to be a whole number"),
    ({"component": "counter", "task_index": 2, "kind": "drop", "every": 1},
     "task_index for 'counter' among 0..1"),
])
def test_bad_faults_are_refused_at_the_handshake(tmp_path, fault, expected):
    hs = spout_handshake() if fault["component"] == "spout" else handshake("counter", 2)
    hook = TraceHook({schema.TRACE_DIR: str(tmp_path), schema.FAULTS: [fault]})
    with pytest.raises(ConformanceError) as err:
        hook.down(hs)
    text = str(err.value)
    assert expected in text
    assert "topology 'demo'" in text and "task" in text


def test_faults_given_as_json_text_in_the_handshake_conf(tmp_path):
    faults = json.dumps([{"component": "counter", "kind": "drop", "every": 1}])
    hook = TraceHook()
    hook.down(handshake("counter", 2, {schema.FAULTS: faults, schema.TRACE_DIR: str(tmp_path)}))
    hook.up({"pid": 3})
    assert hook.down(tup("1", [1])) == ([], [])
    hook.flush()
    assert (tmp_path / f"counter-2-3{tracefile.SUFFIX}").is_file()


def test_two_threads_emitting_at_once_leave_whole_ordered_records(tmp_path):
    hook = started(tmp_path, handshake("counter", 2))
    per_thread = 500

    def emit(name: str) -> None:
        for n in range(per_thread):
            hook.up({"command": "emit", "tuple": [name, n, "x" * 50], "need_task_ids": False})

    threads = [threading.Thread(target=emit, args=(name,)) for name in "ab"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    got = records(hook, tmp_path, f"counter-2-{PID}")
    assert [r["seq"] for r in got] == list(range(2 * per_thread + 1))
    values = [json.loads(r["values"]) for r in got[1:]]
    for name in "ab":
        assert [v[1] for v in values if v[0] == name] == list(range(per_thread))


NEXT = {"command": "next", "id": ""}
SYNC = {"command": "sync"}


def next_tuple(hook: TraceHook, *emits: int) -> tuple[list, list]:
    """One `next` as Storm's side sends it; the spout (if asked) emits `emits`."""
    mine, back = hook.down(NEXT)
    if mine:
        for n in emits:
            hook.up({"command": "emit", "tuple": [n], "id": n, "need_task_ids": False})
        hook.up(SYNC)
    return mine, back


def test_a_spout_is_stopped_after_its_bound_and_still_replays(tmp_path):
    hook = started(tmp_path, spout_handshake({schema.BOUND: {"tuples": 3}}))
    assert next_tuple(hook, 0, 1) == ([NEXT], [])
    hook.down({"command": "fail", "id": 0})  # a replay is no new emit
    hook.up({"command": "emit", "tuple": [0], "id": 0, "need_task_ids": False})
    hook.up(SYNC)
    assert next_tuple(hook, 2, 3) == ([NEXT], [])  # the call that passes the bound ends
    assert next_tuple(hook) == ([], [SYNC])  # from now on the hook answers
    assert next_tuple(hook) == ([], [SYNC])
    assert hook.answering
    hook.down({"command": "ack", "id": 3})
    got = records(hook, tmp_path, f"spout-4-{PID}")
    assert [(r["ev"], r.get("emits"), r.get("reason")) for r in got
            if r["ev"] in ("stop", "spout_ack")] == [("stop", 4, "tuples"),
                                                     ("spout_ack", None, None)]
    assert sum(r["ev"] == "emit" for r in got) == 5


def test_a_spout_is_stopped_after_its_seconds(tmp_path, monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr("heronbridge.conformance.trace.hook._now", lambda: clock[0])
    hook = started(tmp_path, spout_handshake({schema.BOUND: {"seconds": 2}}))
    assert next_tuple(hook, 0) == ([NEXT], [])
    clock[0] += 1.5
    assert next_tuple(hook, 1) == ([NEXT], [])
    clock[0] += 1
    assert next_tuple(hook) == ([], [SYNC])
    stop = [r for r in records(hook, tmp_path, f"spout-4-{PID}") if r["ev"] == "stop"]
    assert [(r["emits"], r["reason"]) for r in stop] == [(2, "seconds")]


def test_counts_from_an_earlier_run_bound_each_task_by_its_index(tmp_path):
    bound = {"seconds": 1, "counts": {"counter": [None, 1]}}
    hooks = [started(tmp_path / str(task), handshake("counter", task, {schema.BOUND: bound},
                                                     {}))
             for task in (2, 3)]
    for hook in hooks:
        for n in range(3):
            next_tuple(hook, n)
    assert [h.answering for h in hooks] == [False, True]  # index 0: no count, no seconds


def test_bolts_are_never_bounded(tmp_path):
    hook = started(tmp_path, handshake("counter", 2, {schema.BOUND: {"tuples": 1}}))
    for n in range(3):
        assert hook.down(tup(str(n), [n]))[0]
        hook.up({"command": "emit", "tuple": [n], "anchors": [str(n)], "need_task_ids": False})
    assert not hook.answering


def test_each_task_gets_its_seed_from_its_index_before_the_component_sees_the_handshake(
        tmp_path):
    seen = []
    for task in (2, 3):
        hook = TraceHook({schema.TRACE_DIR: str(tmp_path), schema.SEED: 7},
                         seeded=seen.append)
        hook.down(handshake("counter", task))
    assert seen == [seed.task_seed(7, "counter", 0), seed.task_seed(7, "counter", 1)]
    assert len(set(seen)) == 2
    unseeded = []
    TraceHook({}, seeded=unseeded.append).down(handshake("counter", 2))
    assert unseeded == [None]


def test_in_process_the_hook_seeds_random(tmp_path):
    import random

    TraceHook({schema.SEED: 3}).down(handshake("counter", 3))
    drawn = [random.random() for _ in range(3)]
    random.seed(seed.task_seed(3, "counter", 1))
    assert drawn == [random.random() for _ in range(3)]


def test_block_heads_sum_the_task_up_for_progress(tmp_path):
    hook = started(tmp_path, spout_handshake())
    next_tuple(hook, 1, 2, 3)
    hook.down({"command": "ack", "id": 2})
    hook.flush()
    scan = tracefile.Scan(tmp_path / f"spout-4-{PID}{tracefile.SUFFIX}")
    scan.more()
    head = scan.last
    assert scan.file["spout"] is True and scan.file["tasks"] == TASKS
    assert head.totals == {"start": 1, "emit": 3, "spout_ack": 1}
    assert (head.pending, sorted(head.pending_ids), head.emitted) == (2, ["1", "3"], 3)
    assert head.first_emit <= head.last_emit <= head.active
