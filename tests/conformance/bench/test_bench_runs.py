"""`heronbridge bench` as a user runs it, on the runtime alone (Storm's side is in
tests/conformance/test_bench_storm.py). bench needs the conformance extra, so these run
in its tox env."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from testkit import HERONBRIDGE, bench_verb

ROOT = Path(__file__).resolve().parents[3]
WORDCOUNT = ROOT / "examples" / "storm_topologies" / "wordcount"
ENDLESS = ["-o", "wordcount.rounds=1000000000"]


def bench(tmp_path: Path, *args: str) -> tuple[dict, str]:
    return bench_verb(tmp_path, WORDCOUNT, *ENDLESS, *args)


@pytest.mark.integration
@pytest.mark.conformance  # bench is a verb of the conformance extra
@pytest.mark.solo  # rates and latencies
def test_the_runtime_is_measured_at_saturation_and_at_the_offered_load(tmp_path):
    result, table = bench(tmp_path, "--systems", "runtime", "--par", "1", "--rate", "400",
                          "--warmup", "1", "--seconds", "3")
    run = result["systems"]["runtime"]
    assert result["par"] == 1 and result["sink"] == ["count_bolt"]
    assert run["saturation"]["sink_per_s"] > 400
    # The pacing holds the offered load: every word reaches the sink, no more.
    assert run["fixed"]["offered_per_s"] == 400
    assert run["fixed"]["sink_per_s"] == pytest.approx(400, rel=0.15)
    assert run["fixed"]["acks"] > 0 and run["fixed"]["fails"] == 0
    p50, p99, p999 = (run["fixed"][k] for k in ("p50_ms", "p99_ms", "p999_ms"))
    assert 0 < p50 <= p99 <= p999
    assert run["memory"]["task"]["processes"] == 2  # a spout and one count task
    assert run["memory"]["stream manager"]["peak_rss_mb"] > 0
    assert run["saturation"]["cpu_s_per_million"] > 0
    # Both fused runs are measured; which costs less CPU is a reading, not a test (the
    # machine is shared, and a loaded run put the unprobed one above the probed one).
    fused, bare = result["fused"], result["fused_unprobed"]
    assert fused["sink_per_s"] > 0 and bare["sink_per_s"] > 0
    assert fused["cpu_s_per_million"] > 0 and bare["cpu_s_per_million"] > 0
    assert result["ratios"]["throughput_runtime_over_fused"] > 0
    assert "sink tuples/s, saturated" in table
    assert (tmp_path / "out" / "bench.json").is_file()


@pytest.mark.integration
@pytest.mark.conformance  # bench is a verb of the conformance extra
@pytest.mark.solo  # rates and latencies
def test_acking_off_has_no_trees_to_time(tmp_path):
    result, _ = bench(tmp_path, "--systems", "runtime", "--no-fused", "--acking", "off",
                      "--rate", "300", "--warmup", "1", "--seconds", "2")
    run = result["systems"]["runtime"]
    assert result["acking"] is False
    assert run["fixed"]["p99_ms"] is None and run["saturation"]["p50_ms"] is None
    assert run["fixed"]["sink_per_s"] == pytest.approx(300, rel=0.15)


@pytest.mark.integration
@pytest.mark.conformance  # bench is a verb of the conformance extra
def test_a_sink_the_topology_lacks_is_refused_by_name(tmp_path):
    done = subprocess.run([HERONBRIDGE, "bench", "--project", str(WORDCOUNT), "--sink", "nope",
                           "--systems", "runtime", "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path, check=False)
    assert done.returncode == 1
    assert "topology 'wordcount'" in done.stderr and "['count_bolt']" in done.stderr
    assert "['nope']" in done.stderr
