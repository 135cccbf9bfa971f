"""A message hook (the conformance suite's tracing hook) sees a heronpy component as it
sees a streamparse one: the multilang messages pystorm would exchange."""

from __future__ import annotations

import json

import pytest
from heronpy_kit import Hosted, build_plan
from hp_components import JudgeBolt, NumberSpout

from heronbridge.conformance.trace import tracefile
from heronbridge.conformance.trace.hook import HOOK_PATH
from heronbridge.conformance.trace.schema import FAULTS, TRACE_DIR
from heronbridge.runtime.api.tuple import tick_tuple
from heronbridge.shims.storm.keys import HOOK

# The keys of each record, as conformance/trace/schema.py documents them.
COMMON = {"t", "seq", "ev", "component", "task"}
SHAPES = {"start": {"pid", "tasks"}, "recv": {"id", "src", "stream", "src_task", "values"},
          "emit": {"stream", "values", "anchors", "direct", "msg_id", "targets"},
          "ack": {"id", "injected"}, "fail": {"id", "injected"}, "spout_ack": {"msg_id"},
          "spout_fail": {"msg_id"}, "activate": set(), "deactivate": set(), "error": {"msg"}}


def traced(tmp_path, faults=None):
    def build(b):
        from heronpy.api.stream import Grouping

        numbers = b.add_spout("numbers", NumberSpout, 1)
        b.add_bolt("judge", JudgeBolt, 1, inputs={numbers: Grouping.SHUFFLE})

    return build_plan("traced", build, {
        "topology.reliability.mode": "ATLEAST_ONCE", "test.fail.every": 3, HOOK: HOOK_PATH,
        TRACE_DIR: str(tmp_path), FAULTS: json.dumps(faults or [])})


def records(hosted, tmp_path, component):
    hosted.host.tracer.hook.flush()  # the hook writes its records in blocks
    (path,) = tmp_path.glob(f"{component}-*{tracefile.SUFFIX}")
    rows = list(tracefile.read(path))
    for row in rows:
        assert set(row) == COMMON | SHAPES[row["ev"]], row
    return rows


def test_a_traced_bolt_records_what_it_received_emitted_acked_and_failed(tmp_path):
    bolt = Hosted(traced(tmp_path), "judge")
    for n in (1, 3):
        bolt.receive("numbers", [n, f"k{n}"], root=10 + n, edge=n)
    bolt.host.execute(tick_tuple(1))
    rows = records(bolt, tmp_path, "judge")
    assert [r["ev"] for r in rows] == ["start", "recv", "emit", "ack", "recv", "emit", "fail",
                                       "recv"]
    start, recv, emit, ack = rows[:4]
    assert start["tasks"] == {"__acker": [1], "judge": [2], "numbers": [3]}
    assert (recv["id"], recv["src"], recv["stream"], recv["src_task"], recv["values"]) == \
        ("1", "numbers", "default", 3, '[1,"k1"]')
    assert (emit["stream"], emit["values"], emit["anchors"], emit["direct"], emit["msg_id"],
            emit["targets"]) == ("default", "[1]", ["1"], None, None, None)
    assert (ack["id"], ack["injected"]) == ("1", False)
    assert (rows[6]["ev"], rows[6]["id"]) == ("fail", "2")
    assert (rows[7]["src"], rows[7]["stream"]) == ("__system", "__tick")  # ticks: not acked
    # What the hook passed on was carried out on the runtime's side.
    settled = bolt.settled()
    assert settled["ack"][0] == 11 and settled["fail"] == [13]
    assert bolt.host.tracer.peer.tuples == {}


def test_an_injected_fail_reaches_the_runtime_and_the_bolt_never_sees_the_tuple(tmp_path):
    bolt = Hosted(traced(tmp_path, [{"component": "judge", "kind": "fail", "every": 2}]),
                  "judge")
    for n in (1, 2, 4):
        bolt.receive("numbers", [n, "k"], root=n, edge=n)
    rows = records(bolt, tmp_path, "judge")
    assert [(r["ev"], r.get("injected")) for r in rows if r["ev"] in ("ack", "fail")] == \
        [("ack", False), ("fail", True), ("ack", False)]
    assert bolt.settled()["fail"] == [2]
    assert len([r for r in rows if r["ev"] == "emit"]) == 2


def test_a_traced_spout_records_commands_emits_and_callbacks(tmp_path):
    spout = Hosted(traced(tmp_path), "numbers")
    spout.host.activate()
    spout.host.next_tuple()
    spout.host.next_tuple()
    spout.host.ack(0)
    spout.host.fail(1)
    spout.host.deactivate()
    rows = records(spout, tmp_path, "numbers")
    assert [r["ev"] for r in rows] == ["start", "activate", "emit", "emit", "spout_ack",
                                       "spout_fail", "deactivate"]
    emit = rows[2]
    assert (emit["values"], emit["msg_id"], emit["anchors"], emit["targets"]) == \
        ('[0,"k0"]', "0", [], None)
    assert [e["event"] for e in spout.user.record.events] == ["activate", "ack", "fail",
                                                              "deactivate"]
    assert len(spout.emitter.pending) == 2  # both tracked, though the hook saw them first


def test_need_task_ids_go_through_the_hook_as_the_targets_of_the_emit(tmp_path):
    spout = Hosted(traced(tmp_path), "numbers")
    assert spout.user.emit([5, "k0"], tup_id=5, need_task_ids=True) == [2]
    emit = [r for r in records(spout, tmp_path, "numbers") if r["ev"] == "emit"][-1]
    assert emit["targets"] == [2]


def test_a_component_error_is_reported_through_the_hook_before_the_task_dies(tmp_path):
    bolt = Hosted(traced(tmp_path), "judge")
    bolt.user.process = lambda tup: 1 / 0
    with pytest.raises(ZeroDivisionError):
        bolt.receive("numbers", [1, "k1"])
    error = records(bolt, tmp_path, "judge")[-1]
    assert error["ev"] == "error" and "ZeroDivisionError" in error["msg"]
