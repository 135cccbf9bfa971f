"""The reliable example on the runtime under the tracing hook: in-process, and with every
component a multilang subprocess under the tracing proxy."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from heronbridge.conformance import ConformanceError, plan_file
from heronbridge.conformance.runtime_side import RuntimeTimeout, run_on_runtime
from heronbridge.conformance.scenario import Scenario
from heronbridge.conformance.trace import tracefile

pytestmark = pytest.mark.integration

PROJECT = Path(__file__).parents[3] / "examples" / "storm_topologies" / "reliable"
MODES = pytest.mark.parametrize("multilang", [False, True], ids=["in-process", "multilang"])


def scenario(count: int, faults: list | None = None, **kw) -> Scenario:
    return Scenario(name="reliable-test", project=PROJECT, options={"reliable.count": count},
                    config={"topology.message.timeout.secs": 2}, faults=faults or [],
                    quiet=1.5, timeout=kw.pop("timeout", 40), **kw)


def events(traces: Path) -> list[dict]:
    return sorted((r for path in tracefile.files(traces) for r in tracefile.read(path)),
                  key=lambda r: r["t"])


def of(records: list[dict], component: str, *evs: str) -> list[dict]:
    return [r for r in records if r["component"] == component and r["ev"] in evs]


def spout_story(records: list[dict]) -> dict[int, list[str]]:
    """Each number's emits and callbacks at the spout, in order."""
    story: dict[int, list[str]] = {}
    for r in of(records, "numbers", "emit", "spout_ack", "spout_fail"):
        story.setdefault(json.loads(r["msg_id"]), []).append(r["ev"])
    return story


@MODES
def test_every_number_is_traced_as_the_topology_handled_it(tmp_path, multilang):
    count = 40
    data = tmp_path / "extra.txt"
    data.write_text("input")
    seen = []
    run = run_on_runtime(PROJECT, scenario(count, files={"data/extra.txt": data}), tmp_path,
                         multilang=multilang, on_progress=seen.append)
    assert run.finished and run.topology == "reliable"
    assert run.snapshot.pending == 0 and seen[-1] is run.snapshot
    assert (run.workdir / "resources" / "data" / "extra.txt").read_text() == "input"
    assert plan_file.read(tmp_path)["components"]["checker"]["inputs"] == [
        {"source": "numbers", "stream": "default", "grouping": "shuffle", "fields": []}]
    records = events(run.traces)
    starts = of(records, "numbers", "start") + of(records, "checker", "start")
    assert len(starts) == 2 and all(r["tasks"]["__acker"] == [1] for r in starts)
    assert {p.name for p in run.traces.iterdir()} == \
        {tracefile.file_name(r["component"], r["task"], r["pid"]) for r in starts}
    # The README's rule: multiples of 31 fail four times (then the spout gives up),
    # other multiples of 7 fail once, everything else is acked at once.
    expected = {n: ["emit", "spout_fail"] * 4 if n % 31 == 0 else
                ["emit", "spout_fail", "emit", "spout_ack"] if n % 7 == 0 else
                ["emit", "spout_ack"] for n in range(count)}
    assert spout_story(records) == expected
    # One checker task: it received exactly what the spout emitted, and answered each.
    emitted = Counter(r["values"] for r in of(records, "numbers", "emit"))
    received = of(records, "checker", "recv")
    assert Counter(r["values"] for r in received) == emitted
    answered = of(records, "checker", "ack", "fail")
    assert sorted(r["id"] for r in answered) == sorted(r["id"] for r in received)
    assert not any(r["injected"] for r in answered)


@pytest.mark.parametrize(("multilang", "kind"), [(False, "fail"), (True, "drop")],
                         ids=["in-process-fail", "multilang-drop"])
def test_injected_faults_make_the_spout_fail_and_replay(tmp_path, multilang, kind):
    count = 30
    run = run_on_runtime(PROJECT, scenario(count, [
        {"component": "checker", "task_index": 0, "kind": kind, "every": 4}]), tmp_path,
        multilang=multilang)
    records = events(run.traces)
    received = of(records, "checker", "recv")
    injected = [r for r in of(records, "checker", kind) if r.get("injected", True)]
    assert len(injected) == len(received) // 4 > 0
    story = spout_story(records)
    assert set(story) == set(range(count))
    values = {r["id"]: json.loads(r["values"])[0] for r in received}
    hit = Counter(values[r["id"]] for r in injected)
    for n, evs in story.items():
        fails = evs.count("spout_fail")
        assert fails >= hit[n], (n, evs)  # each injected fault failed its tree
        # ReliableSpout replays each failure until it has replayed three times
        assert evs.count("emit") == 1 + min(fails, 3), (n, evs)
        assert evs[-1] == ("spout_fail" if fails == 4 else "spout_ack"), (n, evs)
    assert sum(hit.values()) == len(injected)


def test_an_exit_fault_restarts_the_task_once_with_a_new_trace_file(tmp_path):
    run = run_on_runtime(PROJECT, scenario(30, [
        {"component": "checker", "kind": "exit", "after": 12}]), tmp_path)
    records = events(run.traces)
    exits = of(records, "checker", "exit")
    assert len(exits) == 1 and run.snapshot.exits == 1
    starts = of(records, "checker", "start")
    assert len(starts) == 2 and starts[0]["pid"] != starts[1]["pid"]
    assert len(list(run.traces.glob(f"checker-*{tracefile.SUFFIX}"))) == 2
    # the first process handled twelve tuples, then took one more and ended
    first = [r for r in of(records, "checker", "recv") if r["t"] <= exits[0]["t"]]
    assert len(first) == 13
    assert set(spout_story(records)) == set(range(30))


@pytest.mark.solo  # its deadline of seconds includes the topology's start
def test_a_run_that_never_settles_times_out_naming_the_topology(tmp_path):
    # 12 s: the deadline includes the start, and a loaded machine had not emitted all five
    # within 6 s.
    sc = scenario(5, [{"component": "checker", "kind": "drop", "every": 1}], timeout=12)
    sc.config["topology.message.timeout.secs"] = 60  # dropped trees stay pending
    with pytest.raises(RuntimeTimeout) as err:
        run_on_runtime(PROJECT, sc, tmp_path)
    assert "topology 'reliable' on the runtime" in str(err.value)
    assert "5 spout messages pending" in str(err.value)
    assert err.value.run.finished is False and err.value.run.snapshot.pending == 5


def test_a_fault_on_a_spout_is_refused_before_anything_runs(tmp_path):
    with pytest.raises(ConformanceError, match="'numbers', a spout"):
        run_on_runtime(PROJECT, scenario(5, [{"component": "numbers", "kind": "fail",
                                               "every": 2}]), tmp_path)
    assert not (tmp_path / "runtime" / "home").exists()


def test_a_bound_stops_the_spout_and_the_run_drains(tmp_path):
    run = run_on_runtime(PROJECT, scenario(10_000, tuples=25), tmp_path)
    assert run.finished and run.snapshot.stopped == run.snapshot.spout_tasks == 1
    records = events(run.traces)
    (stop,) = of(records, "numbers", "stop")
    assert (stop["emits"], stop["reason"]) == (25, "tuples")
    assert set(spout_story(records)) == set(range(25))  # then replays only, and settled


@pytest.mark.solo  # its deadline of seconds includes the topology's start
def test_a_time_limit_with_spouts_still_emitting_says_how_to_bound_the_run(tmp_path):
    with pytest.raises(RuntimeTimeout) as err:
        run_on_runtime(PROJECT, scenario(10**9, tuples=None, timeout=8), tmp_path)
    text = str(err.value)
    assert "spouts were still emitting" in text and "--tuples N" in text
