"""The pytest plugin: found through its entry point, its fixtures, its flag, and a failing
assertion's diff in pytest's report."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.integration  # runs pytest in processes of its own

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "storm_topologies"


def test_pytest_loads_the_plugin_from_its_entry_point():
    found = subprocess.run([sys.executable, "-m", "pytest", "--help"], capture_output=True,
                           text=True, check=True, cwd="/")
    assert "--on-storm" in found.stdout


def test_fixtures_run_a_users_test_and_show_the_diff(pytester):
    pytester.makepyfile(test_user=f"""
        from heronbridge.testing import assert_emitted

        PROJECT = {str(EXAMPLES / "wordcount")!r}

        def test_counts(complete_topology, on_storm):
            assert not on_storm
            result = complete_topology(PROJECT, mocked_sources={{"word_spout": [["a"], ["a"]]}})
            assert_emitted(result, "count_bolt", [["a", 1], ["a", 2]])

        def test_wrong(complete_topology):
            result = complete_topology(PROJECT, mocked_sources={{"word_spout": [["a"]]}})
            assert_emitted(result, "count_bolt", [["b", 1]])

        def test_alone(isolate):
            bolt = isolate(PROJECT, "count_bolt")
            bolt.execute(["z"])
            assert bolt.emitted() == [["z", 1]]
    """)
    run = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    run.assert_outcomes(passed=2, failed=1)
    out = run.stdout.str()
    said = [line[1:].strip() for line in out.splitlines() if line.startswith("E ")]
    assert said == [
        "AssertionError: topology 'wordcount' (runtime), component 'count_bolt', "
        "stream 'default':", "expected 1 tuples, emitted 1",
        "missing (expected, not emitted):", '- ["b", 1]',
        "unexpected (emitted, not expected):", '- ["a", 1]']
    assert "raise AssertionError(msg)" not in out  # the harness's frame is hidden
