"""The state check's verdict, without Spark: each system's final counts against the
input's, judged by the delivery mode it ran under; and what a scenario says about it."""

from __future__ import annotations

from pathlib import Path

import pytest

from heronbridge.conformance import ConformanceError
from heronbridge.conformance import scenario as scenarios
from heronbridge.conformance.analysis import FAIL, PASS
from heronbridge.conformance.analysis.state import (
    AT_LEAST,
    AT_MOST,
    EXACT,
    Rollbacks,
    Tally,
    judge,
    mode_of,
    rollbacks,
)
from heronbridge.conformance.analysis.topology import from_plan
from heronbridge.conformance.scenario import StateSpec
from heronbridge.conformance.trace import schema

SPEC = StateSpec(component="count", key="word", count="count", source="lines", field="line",
                 split="[a-z]+", lower=True)
STORM, RUNTIME = schema.STORM, schema.RUNTIME
# The analysis needs pyspark's py4j: these run in the conformance env.
pytestmark = pytest.mark.conformance

EXAMPLE = (Path(__file__).resolve().parents[3] / "examples" / "storm_topologies"
           / "stateful_replays" / "scenario.yaml")

EXACT_TALLY = Tally(keys=140, expected=1100, counted=1100)
OVER = Tally(keys=140, expected=1100, counted=1320, over=140, over_by=220, over_most=39,
             examples=[("the", 195, 234), ("a", 45, 54)])
UNDER = Tally(keys=140, expected=1100, counted=1090, under=3, under_by=10, under_most=5,
              examples=[("the", 195, 190)])


def modes(storm: str = AT_LEAST, runtime: str = EXACT) -> dict[str, str]:
    return {STORM: storm, RUNTIME: runtime}


def test_exact_on_the_runtime_and_an_overcount_on_storm_pass_and_say_so():
    verdict = judge(SPEC, {STORM: OVER, RUNTIME: EXACT_TALLY}, modes(), Rollbacks(2, 1))

    assert verdict.verdict == PASS
    assert (verdict.check, verdict.subject) == ("state", "count (word -> count)")
    assert verdict.storm == (
        "at least once: overcount: 140 of 140 keys over by 220 in all (at most 39); 1,320 "
        "counted for 1,100, e.g. the: 234 for 195, a: 54 for 45")
    assert verdict.runtime == ("effectively once: exact: 140 keys, 1,100 counted as the "
                               "input holds; after 2 rollbacks (1 to a consistent "
                               "checkpoint)")
    assert "Storm overcounts, as at-least-once may" in verdict.detail
    assert "(expected, not a failure)" in verdict.detail
    assert "the runtime counts each input once" in verdict.detail


def test_both_exact_pass():
    verdict = judge(SPEC, {STORM: EXACT_TALLY, RUNTIME: EXACT_TALLY}, modes())

    assert verdict.verdict == PASS
    assert verdict.storm.startswith("at least once: exact: 140 keys")
    assert "overcounts" not in verdict.detail


@pytest.mark.parametrize("wrong", [OVER, UNDER], ids=["overcount", "undercount"])
def test_the_effectively_once_side_must_be_exact(wrong):
    verdict = judge(SPEC, {STORM: EXACT_TALLY, RUNTIME: wrong}, modes())

    assert verdict.verdict == FAIL
    assert verdict.detail == ("runtime: effectively-once, yet its state does not count "
                              "each input once")


def test_an_undercount_fails_at_least_once():
    verdict = judge(SPEC, {STORM: UNDER, RUNTIME: EXACT_TALLY}, modes())

    assert verdict.verdict == FAIL
    assert verdict.storm == (
        "at least once: undercount: 3 of 140 keys under by 10 in all (at most 5); 1,090 "
        "counted for 1,100, e.g. the: 190 for 195")
    assert verdict.detail == ("storm: at-least-once, yet 3 keys counted less often than "
                              "the input holds")


def test_at_most_once_may_undercount_but_not_overcount():
    assert judge(SPEC, {STORM: UNDER, RUNTIME: UNDER},
                 modes(AT_MOST, AT_MOST)).verdict == PASS
    verdict = judge(SPEC, {STORM: OVER, RUNTIME: EXACT_TALLY}, modes(AT_MOST, AT_MOST))
    assert verdict.verdict == FAIL
    assert verdict.detail == ("storm: at-most-once, yet 140 keys counted more often than "
                              "the input holds")


def test_a_system_without_state_fails():
    verdict = judge(SPEC, {STORM: OVER, RUNTIME: None}, modes())

    assert verdict.verdict == FAIL
    assert verdict.runtime == "no traces"
    assert verdict.detail == "runtime: no emits of count or of lines to judge its state by"


def test_the_mode_follows_the_plan_and_the_system():
    plan = {"topology": "t", "reliable": True, "mode": "EFFECTIVELY_ONCE", "components": {}}
    stateful = from_plan(plan)
    assert stateful.effectively_once
    assert (mode_of(STORM, stateful), mode_of(RUNTIME, stateful)) == (AT_LEAST, EXACT)
    plain = from_plan({**plan, "mode": None})
    assert (mode_of(STORM, plain), mode_of(RUNTIME, plain)) == (AT_LEAST, AT_LEAST)
    unacked = from_plan({**plan, "reliable": False, "mode": "ATMOST_ONCE"})
    assert (mode_of(STORM, unacked), mode_of(RUNTIME, unacked)) == (AT_MOST, AT_MOST)


def test_rollbacks_are_read_from_the_topology_masters_log(tmp_path):
    assert rollbacks(tmp_path) is None
    log = tmp_path / "runtime" / "home" / "c" / "logs" / "topology-master.log"
    log.parent.mkdir(parents=True)
    log.write_text("x every task restored from empty state in 1.1s (rollback 1); processing\n"
                   "x every task restored from empty state in 0.6s (rollback 2); processing\n"
                   "x every task restored from 0180 in 0.6s (rollback 3); processing\n")
    # The first restore starts the topology; the second was from empty state too.
    assert rollbacks(tmp_path) == Rollbacks(2, 1)
    assert Rollbacks(0, 0).said() == "after 0 rollbacks"


def test_the_example_scenario_names_its_state_and_a_runtime_only_fault():
    s = scenarios.load(EXAMPLE)

    assert s.state == SPEC
    assert s.faults_on(STORM) == []
    assert s.faults_on(RUNTIME) == [{"component": "count", "task_index": 0, "kind": "exit",
                                     "after": 250}]
    assert s.tuples is None


@pytest.mark.parametrize(("text", "expected"), [
    ("state: {component: c, key: k}\n", "state: {component, key, count"),
    ("state: {component: c, key: k, count: n, input: {component: s}}\n",
     "state: {component, key, count"),
    ("state: {component: c, key: k, count: n, input: {component: s, field: f, x: 1}}\n",
     "state: {component, key, count"),
    ("state: {component: c, key: k, count: n, input: {component: s, field: f, split: '['}}\n",
     "state.input.split: a regular expression"),
    ("faults: [{component: b, kind: exit, after: 2, system: heron}]\n",
     "a fault's system among ['storm', 'runtime']"),
])
def test_bad_state_or_fault_system_is_an_error(tmp_path, text, expected):
    path = tmp_path / "s.yaml"
    path.write_text("project: p\n" + text)
    with pytest.raises(ConformanceError, match="expected " + expected.replace("[", r"\[")
                       .replace("{", r"\{").replace("(", r"\(")):
        scenarios.load(path)
