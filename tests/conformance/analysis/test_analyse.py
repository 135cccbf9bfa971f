"""The analysis on Spark over synthetic trace sets: equal runs pass, and each kind of
departure fails the check that should catch it, and only that one."""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path

import pytest
from synthetic_runs import WORDS, Run, scenario, simulate, write

from heronbridge.conformance import inputs
from heronbridge.conformance.analysis import (
    FAIL,
    INFO,
    KNOWN,
    PASS,
    Analysis,
    Verdict,
    analyse,
)
from heronbridge.conformance.scenario import CHECKS, Divergence
from heronbridge.conformance.trace import schema, tracefile

pytestmark = [pytest.mark.integration, pytest.mark.conformance]

FAULT = [{"component": "counter", "task_index": None, "kind": "fail", "every": 5}]


def one(result: Analysis, check: str, subject: str) -> Verdict:
    found = [v for v in result.verdicts if v.check == check and v.subject == subject]
    assert len(found) == 1, f"{check} {subject!r}: {found} among {result.verdicts}"
    return found[0]


def failing(result: Analysis) -> list[tuple[str, str]]:
    return sorted((v.check, v.subject) for v in result.verdicts if v.verdict == FAIL)


def run_both(tmp_path: Path, spark, storm: Run | None = None, runtime: Run | None = None,
             **options) -> Analysis:
    runs = [storm or simulate(schema.STORM), runtime or simulate(schema.RUNTIME)]
    write(tmp_path, *runs, reliable=options.pop("reliable", True))
    return analyse(tmp_path, options.pop("scenario", None) or scenario(), spark=spark)


def test_equal_runs_pass_every_check(tmp_path, spark):
    storm, runtime = simulate(schema.STORM), simulate(schema.RUNTIME)
    result = run_both(tmp_path, spark, storm, runtime)

    assert result.ok, failing(result)
    assert {v.check for v in result.verdicts} == set(CHECKS)
    assert {v.subject for v in result.verdicts if v.check == "parity"} == {
        "counter/default", "router/routed", "words/default"}
    judged = {v.subject: v.verdict for v in result.verdicts if v.check == "grouping"}
    assert judged == {
        "words -> counter (fields word)": PASS, "counter -> tally (fields word)": PASS,
        "counter -> total (global)": PASS, "words -> every (all)": PASS,
        "router/routed -> sink (direct)": PASS, "words -> spread (shuffle)": INFO,
        "words -> router (shuffle)": INFO}
    assert one(result, "delivery", "words").runtime.startswith(f"{len(WORDS)} ids: "
                                                               f"{len(WORDS)} acked")
    assert {v.subject for v in result.verdicts if v.check == "order"} == {
        "words -> counter (fields word)", "counter -> tally (fields word)",
        "counter -> total (global)"}

    for run in (storm, runtime):
        stats = result.stats[run.system]
        inputs = [r for r in run.records if r["ev"] == schema.RECV]
        assert stats.tuples == len(inputs)
        assert sum(n for _, n in stats.throughput) == len(inputs)
        per_task = Counter((r["component"], r["task"]) for r in inputs)
        assert {(c, t): n for c, tasks in stats.load.items() for t, n in tasks.items()
                if n} == dict(per_task)
        assert stats.load["total"][run.task("total", 1)] == 0  # known from the handshake
        assert set(stats.latency_ms) == {"p50", "p90", "p99", "max"}
        assert sum(n for _, n in stats.latency_hist) == len(WORDS)
        times = [r["t"] for r in run.records]
        assert stats.seconds == pytest.approx(max(times) - min(times), abs=1e-3)


def test_a_changed_value_fails_parity_of_that_stream_only(tmp_path, spark):
    runtime = simulate(schema.RUNTIME)
    changed = runtime.find(ev=schema.EMIT, component="counter")[3]
    changed["values"] = schema.canonical(["zebra", 1])
    result = run_both(tmp_path, spark, runtime=runtime)

    assert failing(result) == [("parity", "counter/default")]
    detail = one(result, "parity", "counter/default").detail
    assert '["zebra",1] (storm ×0, runtime ×1)' in detail


def test_a_key_on_two_tasks_fails_grouping(tmp_path, spark):
    runtime = simulate(schema.RUNTIME)
    second = runtime.find(ev=schema.RECV, component="counter",
                          values=schema.canonical(["the"]))[1]
    tasks = runtime.tasks["counter"]
    second["task"] = tasks[1 - tasks.index(second["task"])]
    result = run_both(tmp_path, spark, runtime=runtime)

    verdict = one(result, "grouping", "words -> counter (fields word)")
    assert verdict.verdict == FAIL
    assert verdict.storm.endswith("each on one task")
    assert f'runtime: 1 key on more than one task, e.g. ["the"] at tasks {tasks}' in \
        verdict.detail


def test_keys_on_another_task_index_than_storms_fail_grouping(tmp_path, spark):
    result = run_both(tmp_path, spark, runtime=simulate(schema.RUNTIME, shift_fields=1))

    assert ("grouping", "words -> counter (fields word)") in failing(result)
    detail = one(result, "grouping", "words -> counter (fields word)").detail
    assert detail.startswith("both: ")
    assert "at a different task index" in detail


def test_a_tuple_off_the_lowest_task_fails_global(tmp_path, spark):
    runtime = simulate(schema.RUNTIME)
    runtime.find(ev=schema.RECV, component="total")[5]["task"] = runtime.task("total", 1)
    result = run_both(tmp_path, spark, runtime=runtime)

    assert failing(result) == [("grouping", "counter -> total (global)")]
    lowest = runtime.task("total", 0)
    assert f"instead of the lowest task {lowest}" in \
        one(result, "grouping", "counter -> total (global)").detail


def test_a_task_missing_a_tuple_fails_all(tmp_path, spark):
    runtime = simulate(schema.RUNTIME)
    runtime.records.remove(runtime.find(ev=schema.RECV, component="every")[4])
    result = run_both(tmp_path, spark, runtime=runtime)

    assert failing(result) == [("grouping", "words -> every (all)")]


def test_a_tuple_at_a_task_not_named_fails_direct(tmp_path, spark):
    runtime = simulate(schema.RUNTIME)
    moved = runtime.find(ev=schema.RECV, component="sink")[2]
    moved["task"] = next(t for t in runtime.tasks["sink"] if t != moved["task"])
    result = run_both(tmp_path, spark, runtime=runtime)

    assert failing(result) == [("grouping", "router/routed -> sink (direct)")]
    assert "runtime: 2 tuples not exactly at the task its emit named" in \
        one(result, "grouping", "router/routed -> sink (direct)").detail


def test_an_unacked_msg_id_fails_delivery(tmp_path, spark):
    runtime = simulate(schema.RUNTIME)
    runtime.records.remove(runtime.find(ev=schema.SPOUT_ACK, msg_id="7")[0])
    result = run_both(tmp_path, spark, runtime=runtime)

    assert failing(result) == [("delivery", "words")]
    detail = one(result, "delivery", "words").detail
    assert "runtime: 1 id never acked nor failed after its last emit, e.g. 7" in detail
    assert "handled differently, e.g. 7 (storm: acked after 1 emit; runtime: pending" in detail


def test_a_swapped_order_fails_order(tmp_path, spark):
    runtime = simulate(schema.RUNTIME)
    first, second = [r for r in runtime.find(ev=schema.RECV, component="tally")
                     if json.loads(r["values"])[0] == "the"][:2]
    i, j = runtime.records.index(first), runtime.records.index(second)
    runtime.records[i], runtime.records[j] = second, first
    result = run_both(tmp_path, spark, runtime=runtime)

    assert failing(result) == [("order", "counter -> tally (fields word)")]
    verdict = one(result, "order", "counter -> tally (fields word)")
    assert verdict.storm.endswith("in order")
    assert 'tuple 1 emitted ["the",1], received ["the",2]' in verdict.detail


def test_a_restarted_task_is_read_in_file_order(tmp_path, spark):
    runtime = simulate(schema.RUNTIME)
    tally = [r for r in runtime.records if r["component"] == "tally"
             and r["task"] == runtime.task("tally", 1)]
    for record in tally[len(tally) // 2:]:
        record["_pid"] = 4242  # a second process: its seq starts again at 0
    result = run_both(tmp_path, spark, runtime=runtime)

    assert len(list((tmp_path / schema.RUNTIME / schema.TRACES).glob("tally-*"))) == 3
    assert result.ok, failing(result)


def test_a_known_divergence_turns_the_failure_into_known(tmp_path, spark):
    runtime = simulate(schema.RUNTIME)
    runtime.find(ev=schema.EMIT, component="counter")[0]["values"] = schema.canonical(["x", 9])
    declared = [Divergence("parity", "counter/*", "counts depend on arrival order"),
                Divergence("order", "nothing -> *", "never happens")]
    result = run_both(tmp_path, spark, runtime=runtime,
                      scenario=scenario(divergences=declared))

    assert result.ok
    verdict = one(result, "parity", "counter/default")
    assert verdict.verdict == KNOWN
    assert verdict.detail.startswith("counts depend on arrival order (observed: ")
    unused = one(result, "order", "nothing -> *")
    assert unused.verdict == INFO
    assert "no failing verdict matches it" in unused.detail


def test_without_storm_traces_cross_checks_fail_and_the_rest_still_run(tmp_path, spark):
    write(tmp_path, simulate(schema.RUNTIME))
    result = analyse(tmp_path, scenario(), spark=spark)

    assert set(result.stats) == {schema.RUNTIME}
    parity = one(result, "parity", "words/default")
    assert (parity.verdict, parity.storm) == (FAIL, "no traces")
    assert "no storm traces" in parity.detail
    assert one(result, "grouping", "words -> counter (fields word)").verdict == FAIL
    assert one(result, "grouping", "counter -> total (global)").verdict == PASS
    assert one(result, "grouping", "counter -> total (global)").runtime.startswith("24 tuples")
    assert one(result, "order", "counter -> tally (fields word)").verdict == PASS
    assert "no storm traces" in one(result, "delivery", "words").detail


def test_with_faults_different_replays_compare_as_sets(tmp_path, spark):
    storm = simulate(schema.STORM, replay_once=frozenset({4}))
    runtime = simulate(schema.RUNTIME, replay_once=frozenset({3, 5}))
    result = run_both(tmp_path, spark, storm, runtime, scenario=scenario(faults=FAULT))

    assert result.ok, failing(result)
    parity = one(result, "parity", "words/default")
    assert (parity.storm, parity.runtime) == ("25 tuples, 17 distinct", "26 tuples, 17 distinct")
    assert "sets of distinct values" in parity.detail
    delivery = one(result, "delivery", "words")
    assert delivery.runtime == "24 ids: 24 acked, 0 given up; 2 replays, 2 fails"


def test_different_replays_pass_delivery_unless_the_scenario_is_strict(tmp_path, spark):
    storm = simulate(schema.STORM)
    runtime = simulate(schema.RUNTIME, replay_once=frozenset({3}))
    result = run_both(tmp_path, spark, storm, runtime)

    assert result.ok, failing(result)
    delivery = one(result, "delivery", "words")
    assert "history not compared" in delivery.detail
    assert "3 (storm: acked after 1 emit; runtime: acked after 2 emits)" in delivery.detail

    strict = analyse(tmp_path, scenario(delivery="strict"), spark=spark)
    assert failing(strict) == [("delivery", "words")]
    assert "both: 1 of 24 ids handled differently, e.g. 3 (storm: acked after 1 emit; " \
           "runtime: acked after 2 emits)" in one(strict, "delivery", "words").detail


def shuffled_fails(system: str, told: int) -> Run:
    """`numbers` shuffled to `judge` (par 2), which fails 7 once: a spout that is
    told of `told` of those fails."""
    run = Run(system)
    spout, judges = (2, [3, 4]) if system == schema.STORM else (1, [2, 3])
    tasks = {"numbers": [spout], "judge": judges}
    for component, ids in tasks.items():
        run.add(component, ids[0] if component == "numbers" else judges[0], schema.START,
                pid=10, tasks=tasks)
    run.add("judge", judges[1], schema.START, pid=11, tasks=tasks)
    fails = 0
    for n in range(10):
        for attempt in range(2 if n == 7 else 1):
            run.add("numbers", spout, schema.EMIT, stream="default",
                    values=schema.canonical([n]), anchors=[], direct=None,
                    msg_id=schema.canonical(n), targets=None)
            judge = judges[(n + attempt) % 2]
            run.add("judge", judge, schema.RECV, id=f"{n}-{attempt}", src="numbers",
                    stream="default", src_task=spout, values=schema.canonical([n]))
            failed = n == 7 and attempt == 0
            run.add("judge", judge, schema.FAIL if failed else schema.ACK,
                    id=f"{n}-{attempt}", injected=False)
            if failed and fails == told:
                continue  # the spout never hears of it: the tree looks acked
            fails += failed
            run.add("numbers", spout, schema.SPOUT_FAIL if failed else schema.SPOUT_ACK,
                    msg_id=schema.canonical(n))
    return run


SHUFFLED = {"topology": "shuffled", "reliable": True, "components": {
    "numbers": {"kind": "spout", "parallelism": 1, "inputs": [],
                "streams": {"default": {"fields": ["n"], "direct": False}}},
    "judge": {"kind": "bolt", "parallelism": 2, "streams": {}, "inputs": [
        {"source": "numbers", "stream": "default", "grouping": "shuffle", "fields": []}]}}}


def test_a_bolt_fail_the_spout_never_hears_of_fails_delivery(tmp_path, spark):
    write(tmp_path, shuffled_fails(schema.STORM, 1), shuffled_fails(schema.RUNTIME, 0),
          topology=SHUFFLED)
    result = analyse(tmp_path, scenario(), spark=spark)

    assert failing(result) == [("delivery", "numbers")]
    detail = one(result, "delivery", "numbers").detail
    assert detail == ("runtime: bolts failed 1 tuple received from numbers, but it was "
                      "told of 0 fails"), detail


def test_ids_given_up_alike_pass_delivery(tmp_path, spark):
    storm = simulate(schema.STORM, give_up=frozenset({2}))
    runtime = simulate(schema.RUNTIME, give_up=frozenset({2}))
    result = run_both(tmp_path, spark, storm, runtime)

    assert result.ok, failing(result)
    assert one(result, "delivery", "words").storm == \
        "24 ids: 23 acked, 1 given up; 0 replays, 1 fail"


def test_at_most_once_replays_fail_delivery(tmp_path, spark):
    runtime = simulate(schema.RUNTIME, replay_once=frozenset({1}))
    result = run_both(tmp_path, spark, runtime=runtime, reliable=False,
                      scenario=scenario(faults=FAULT))

    assert ("delivery", "words") in failing(result)
    assert "runtime: at-most-once, yet 1 ids replayed" in one(result, "delivery", "words").detail
    assert not [v for v in result.verdicts if v.check == "latency"]


def test_checks_the_scenario_leaves_out_yield_nothing(tmp_path, spark):
    runtime = simulate(schema.RUNTIME)
    runtime.records.remove(runtime.find(ev=schema.SPOUT_ACK, msg_id="7")[0])
    result = run_both(tmp_path, spark, runtime=runtime,
                      scenario=scenario(checks=("parity", "order")))

    assert {v.check for v in result.verdicts} == {"parity", "order"}
    assert result.ok


def test_unreadable_blocks_fail_unless_a_fault_killed_a_process(tmp_path, spark):
    write(tmp_path, simulate(schema.STORM), simulate(schema.RUNTIME))
    victim = next((tmp_path / schema.RUNTIME / schema.TRACES).glob("sink-*"))
    with victim.open("ab") as out:  # a block cut short, as by a process killed mid-write
        out.write(tracefile.FRAME.pack(4, 100) + b"\x80\x90\x91\x00")
    result = analyse(tmp_path, scenario(), spark=spark)

    verdict = one(result, "parity", "trace files")
    assert (verdict.verdict, verdict.runtime) == (FAIL, "1 unreadable blocks")
    assert failing(result) == [("parity", "trace files")]
    killed = [{"component": "sink", "task_index": 0, "kind": "exit", "after": 3}]
    assert one(analyse(tmp_path, scenario(faults=killed), spark=spark),
               "parity", "trace files").verdict == INFO


def test_an_active_session_is_used_left_running_and_as_it_was(tmp_path, spark):
    write(tmp_path, simulate(schema.STORM), simulate(schema.RUNTIME))
    settings = ("spark.sql.adaptive.enabled", "spark.sql.shuffle.partitions",
                "spark.sql.codegen.wholeStage")
    before = {key: spark.conf.get(key) for key in settings}

    assert analyse(tmp_path, scenario()).ok
    assert spark.range(3).count() == 3
    assert {key: spark.conf.get(key) for key in settings} == before


def test_an_example_sized_run_takes_seconds(tmp_path, spark):
    words = WORDS * 8
    storm, runtime = simulate(schema.STORM, words), simulate(schema.RUNTIME, words)
    write(tmp_path, storm, runtime)
    analyse(tmp_path, scenario(), spark=spark)  # the first queries of a session load classes
    began = time.monotonic()
    result = analyse(tmp_path, scenario(), spark=spark)
    took = time.monotonic() - began
    print(f"analyse: {len(storm.records)} + {len(runtime.records)} records in {took:.2f} s")
    assert result.ok, failing(result)
    assert result.stats[schema.STORM].tuples == 8 * len(WORDS) * 8
    assert took < 30


def test_a_spout_that_reads_the_clock_falls_back_to_the_checks_that_hold_anyway(tmp_path,
                                                                                 spark):
    other = [w if i % 5 else "clock" for i, w in enumerate(WORDS)]
    write(tmp_path, simulate(schema.STORM), simulate(schema.RUNTIME, other))
    inputs.write(tmp_path, {"words": ["time.time() (spouts/words.py:9)"]})
    result = analyse(tmp_path, scenario(), spark=spark)

    assert result.ok, failing(result)
    parity = {v.subject: v for v in result.verdicts if v.check == "parity"}
    assert {v.verdict for v in parity.values()} == {INFO}
    assert "words's code reads time.time() (spouts/words.py:9)" in \
        parity["words/default"].detail
    assert "input comes from a spout whose output cannot be repeated (words)" in \
        parity["counter/default"].detail
    assert one(result, "grouping", "words -> counter (fields word)").verdict == PASS
    assert one(result, "delivery", "words").verdict == PASS
    assert [n for n in result.notes if "cannot be repeated" in n] == [
        "words emitted different values on the two systems, and its code reads time.time() "
        "(spouts/words.py:9): its input cannot be repeated, so parity is not judged for "
        "counter, every, router, sink, spread, tally, total, words; grouping, delivery and "
        "order are (they hold whatever the input)"]

    inputs.write(tmp_path, {"words": []})  # nothing explains it: parity fails
    strict = analyse(tmp_path, scenario(), spark=spark)
    assert ("parity", "words/default") in failing(strict)
    assert "reads no clock or outside source" in one(strict, "parity", "words/default").detail
