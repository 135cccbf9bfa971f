"""`heronbridge bench` with Storm: the same project on Storm and on the runtime."""

from __future__ import annotations

from pathlib import Path

import pytest
from testkit import bench_verb

WORDCOUNT = Path(__file__).resolve().parents[2] / "examples" / "storm_topologies" / "wordcount"


@pytest.mark.compat("cli/heronbridge bench")
@pytest.mark.integration
@pytest.mark.conformance
@pytest.mark.solo  # rates and latencies
def test_storm_and_the_runtime_side_by_side(tmp_path, storm_home, storm_install):
    result, table = bench_verb(tmp_path, WORDCOUNT, "-o", "wordcount.rounds=1000000000",
                               "--no-fused", "--warmup", "3", "--seconds", "4",
                               "--home", str(storm_home))
    storm, runtime = result["systems"]["storm"], result["systems"]["runtime"]
    # Storm runs the same components as multilang subprocesses under the probe.
    assert storm["memory"]["storm jvm"]["processes"] == 1
    assert storm["memory"]["storm component"]["processes"] == 3
    assert storm["saturation"]["sink_per_s"] > 0 and storm["fixed"]["p99_ms"] > 0
    # Both systems were offered the same load: half of Storm's saturated rate.
    offered = storm["fixed"]["offered_per_s"]
    assert runtime["fixed"]["offered_per_s"] == offered
    for run in (storm, runtime):
        assert run["fixed"]["sink_per_s"] == pytest.approx(offered, rel=0.2)
    ratios = result["ratios"]
    assert ratios["throughput_runtime_over_storm"] > 0
    assert ratios["p99_latency_storm_over_runtime"] > 0
    assert (tmp_path / "out" / "throughput.png").is_file()
    assert (tmp_path / "out" / "latency.png").is_file()
    assert "throughput_runtime_over_storm" in table
