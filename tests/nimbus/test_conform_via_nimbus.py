"""`conform --via-nimbus`: the word count submitted through a Nimbus endpoint as `sparse
submit` submits it gets the same verdicts as when started as `heronbridge run` starts
it, against the same Storm run."""

from __future__ import annotations

import pytest
from nimbuskit import ROOT

from heronbridge.conformance import scenario as scenarios
from heronbridge.conformance.conform import conform
from heronbridge.nimbus.submit import NimbusLaunch

pytestmark = [pytest.mark.integration, pytest.mark.conformance]

SCENARIO = ROOT / "examples" / "storm_topologies" / "scenarios" / "wordcount.yaml"


def test_the_same_verdicts_via_nimbus(tmp_path, spark, storm_home, storm_install):
    scenario = scenarios.bounded(scenarios.load(SCENARIO), 300)
    home = storm_home
    run = conform(scenario, tmp_path / "run", spark=spark, home=home)
    via = conform(scenario, tmp_path / "via", spark=spark, home=home, launcher=NimbusLaunch,
                  storm_from=tmp_path / "run")
    assert run.ok and via.ok, [v for v in via.verdicts if v.verdict == "fail"]

    def verdicts(outcome):
        return [(v.check, v.subject, v.verdict, v.storm) for v in outcome.verdicts]

    assert verdicts(via) == verdicts(run)
    assert {"run", "parity"} <= {v.check for v in via.verdicts}
