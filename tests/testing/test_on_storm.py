"""--on-storm: the example word count's own tests (written with the plugin, mocked sources
and simulated ticks) pass on Apache Storm's local mode too."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.conformance

WORDCOUNT = Path(__file__).resolve().parents[2] / "examples" / "storm_topologies" / "wordcount"


def test_the_word_counts_tests_pass_on_storm(storm_install, storm_home, tmp_path):
    env = {**os.environ, "HERONBRIDGE_HOME": str(storm_home)}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", str(WORDCOUNT / "tests"), "--on-storm",
         "-p", "no:cacheprovider", f"--basetemp={tmp_path / 'run'}", "-rA"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=900, check=False)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "2 passed" in run.stdout
    # complete_topology ran on Storm: its JVM's log and the tasks' traces are in the run dir
    assert [p.name for p in (tmp_path / "run").rglob("storm-run/storm/java.log")] == ["java.log"]
    assert list((tmp_path / "run").rglob("storm-run/storm/traces/count_bolt-*.trace"))
