"""The parts of the analysis that need no Spark: reading plan.json, and known
divergences."""

from __future__ import annotations

import pytest
from synthetic_runs import plan

from heronbridge.conformance import ConformanceError
from heronbridge.conformance.analysis import FAIL, INFO, KNOWN, PASS, Verdict, divergences
from heronbridge.conformance.analysis.topology import from_plan, load
from heronbridge.conformance.scenario import Divergence


def test_subscriptions_name_their_grouping_and_key_positions():
    topology = from_plan(plan())
    subs = {s.subject: s for s in topology.subscriptions}

    assert subs["counter -> tally (fields word)"].key_index == (0,)
    assert subs["counter -> total (global)"].key_index == ()
    assert subs["router/routed -> sink (direct)"].grouping == "direct"
    assert topology.spouts == ["words"]
    assert sorted({s.number for s in topology.subscriptions}) == list(range(len(subs)))


def test_a_grouping_field_the_stream_lacks_is_an_error():
    bad = plan()
    bad["components"]["tally"]["inputs"][0]["fields"] = ["colour"]

    with pytest.raises(ConformanceError) as caught:
        from_plan(bad)
    assert str(caught.value) == (
        "topology 'synthetic', component 'tally': expected grouping fields among "
        "'counter'/'default''s fields ['word', 'count'], received ['colour']")


def test_a_run_without_plan_json_is_an_error(tmp_path):
    with pytest.raises(ConformanceError, match="expected a readable plan.json"):
        load(tmp_path)


def verdicts() -> list[Verdict]:
    return [Verdict("parity", "sink/default", "3 tuples", "4 tuples", FAIL, "1 value"),
            Verdict("parity", "words/default", "3 tuples", "3 tuples", PASS),
            Verdict("order", "a -> sink (fields w)", "ok", "1 out of order", FAIL, "x")]


def test_a_divergence_covers_failures_of_its_check_whose_subject_matches():
    out = divergences.apply(verdicts(), [Divergence("parity", "sink/*", "batches",
                                                    "runtime")], ["parity", "order"])

    assert [v.verdict for v in out] == [KNOWN, PASS, FAIL]
    assert out[0].detail == "runtime departs: batches (observed: 1 value)"


def test_a_divergence_that_covers_nothing_is_reported():
    out = divergences.apply(verdicts(), [Divergence("parity", "words/*", "never"),
                                         Divergence("latency", "*", "not run"),
                                         Divergence("run", "*", "judged elsewhere")],
                            ["parity", "order"])

    assert [v.verdict for v in out[:3]] == [FAIL, PASS, FAIL]
    assert [(v.check, v.verdict) for v in out[3:]] == [("parity", INFO), ("latency", INFO)]
    assert "no failing verdict matches it" in out[3].detail
    assert "its check did not run" in out[4].detail
