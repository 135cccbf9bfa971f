"""The run verdict of `conform`: a run whose code crashed does not pass, and its column
says which task crashed, how often and why."""

from __future__ import annotations

from dataclasses import dataclass

from heronbridge.conformance.conform import SystemRun, _run_verdict
from heronbridge.conformance.scenario import Divergence, Scenario
from heronbridge.conformance.trace import schema


@dataclass
class Verdict:  # analysis.results.Verdict's fields (that module needs pyspark)
    check: str
    subject: str
    storm: str
    runtime: str
    verdict: str
    detail: str = ""


def runs(runtime_crashes: str = "", storm_crashes: str = "") -> dict[str, SystemRun]:
    return {schema.STORM: SystemRun(schema.STORM, True, 20.0, records=900,
                                    crashes=storm_crashes),
            schema.RUNTIME: SystemRun(schema.RUNTIME, True, 22.2, records=800, spout_tasks=1,
                                      crashes=runtime_crashes)}


def test_a_crashing_spout_is_said_and_the_run_fails(tmp_path):
    crash = ("'sentences' task 3 was restarted 5 times: AttributeError: '_io.TextIOWrapper' "
             "object has no attribute 'next' (at src/spouts/lines.py:14, in next_tuple)")
    verdict = _run_verdict(Verdict, Scenario(name="s", project=tmp_path), runs(crash))
    assert verdict.verdict == "fail"
    assert verdict.runtime == f"finished in 22.2s (800 records); its code crashed: {crash}"
    assert verdict.storm == "finished in 20.0s (900 records)"


def test_a_clean_run_passes_and_a_declared_crash_is_a_known_divergence(tmp_path):
    scenario = Scenario(name="s", project=tmp_path)
    assert _run_verdict(Verdict, scenario, runs()).verdict == "pass"
    known = Scenario(name="s", project=tmp_path, divergences=[
        Divergence(check="run", subject="both systems", reason="the spout is Python 2's",
                   system="storm")])
    verdict = _run_verdict(Verdict, known, runs(storm_crashes="'s' task 1 was restarted 2 "
                                                              "times"))
    assert verdict.verdict == "known divergence"
