"""Memory stays bounded under overload: a bolt 100 times slower than its spout, under
at-least-once and at-most-once (a short run of benchmarks/slow_bolt_memory.py, whose
five-minute runs docs/benchmarks.md reports)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import slow_bolt_memory as bench  # noqa: E402

pytestmark = [pytest.mark.faults, pytest.mark.integration]


@pytest.mark.parametrize("mode", bench.MODES)
def test_every_process_stays_under_the_bound_and_nothing_is_dropped(tmp_path, mode):
    # 50,000 tuples/s offered to a bolt that takes 500/s: backpressure, not memory, holds
    # the difference; 4 kB tuples keep the queue (and the drain) short.
    result = bench.run(mode, seconds=30, rate=50_000, sleep=0.002, payload=4000,
                       drain_timeout=120, home=tmp_path / "home")
    assert bench.verdict(result, mode, bench.BOUND_MB) == [], result["counts"]
    assert result["counts"]["bolt_executed"] > 5000  # it ran, and was held back
    assert result["counts"]["spout_emitted"] < 50_000 * 30 / 10
