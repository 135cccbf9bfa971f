"""The harness notices a runtime that misbehaves. Word count runs once on Storm, then on
the runtime three times, each compared with the same Storm traces: as it is (every
check passes), with fields grouping routed like shuffle, and with one tuple lost.
The misbehaviour comes from sabotage/sitecustomize.py, in the runtime's processes only."""

from __future__ import annotations

import os
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from heronbridge.compat.streamparse import load_project
from heronbridge.conformance import plan_file
from heronbridge.conformance.analysis import FAIL, analyse
from heronbridge.conformance.runtime_side import run_on_runtime
from heronbridge.conformance.scenario import Scenario
from heronbridge.conformance.storm import run_on_storm
from heronbridge.conformance.trace import schema

pytestmark = [pytest.mark.integration, pytest.mark.conformance]

HERE = Path(__file__).resolve().parent
SCENARIO = Scenario(name="wordcount", project=HERE.parents[2] / "examples" / "storm_topologies"
                    / "wordcount", config={"topology.message.timeout.secs": 5},
                    tuples=2000, quiet=3.0, timeout=150.0)
FIELDS = "word_spout -> count_bolt (fields word)"


@pytest.fixture(scope="module")
def storm_side(tmp_path_factory, storm_install) -> Path:
    base = tmp_path_factory.mktemp("storm-wordcount")
    project = load_project(SCENARIO.project, None, None, SCENARIO.storm_options(), False,
                           base / schema.STORM / "resources")
    plan_file.write(project.plan, base)
    run = run_on_storm(project, SCENARIO, base, install=storm_install)
    assert run.finished, run.explanation
    return base


def against_storm(storm_side: Path, run_dir: Path, spark, monkeypatch, sabotage: str = ""):
    """The runtime's run in `run_dir`, analysed beside a copy of Storm's traces."""
    run_dir.mkdir()
    shutil.copy(storm_side / plan_file.PLAN_FILE, run_dir)
    shutil.copytree(storm_side / schema.STORM / schema.TRACES,
                    run_dir / schema.STORM / schema.TRACES)
    if sabotage:
        path = os.environ.get("PYTHONPATH")
        monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
            [str(HERE / "sabotage"), *([path] if path else [])]))
        monkeypatch.setenv("SABOTAGE", sabotage)
    run = run_on_runtime(SCENARIO.project, SCENARIO, run_dir)
    assert run.finished
    return analyse(run_dir, SCENARIO, spark=spark)


def verdicts(result) -> dict[tuple[str, str], object]:
    return {(v.check, v.subject): v for v in result.verdicts}


def failing(result) -> list[tuple[str, str]]:
    return sorted((v.check, v.subject) for v in result.verdicts if v.verdict == FAIL)


def test_the_runtime_as_it_is_conforms(storm_side, tmp_path, spark, monkeypatch):
    result = against_storm(storm_side, tmp_path / "run", spark, monkeypatch)
    assert failing(result) == []
    assert verdicts(result)[("grouping", FIELDS)].verdict == "pass"


def test_fields_grouping_routed_like_shuffle_fails_grouping(storm_side, tmp_path, spark,
                                                            monkeypatch):
    result = against_storm(storm_side, tmp_path / "run", spark, monkeypatch,
                           "fields-as-shuffle")
    grouping = verdicts(result)[("grouping", FIELDS)]
    assert grouping.verdict == FAIL, grouping
    assert "on more than one task" in grouping.detail, grouping
    # Each count task now counts some of every word: the running counts differ.
    assert ("parity", "count_bolt/default") in failing(result)
    assert set(failing(result)) <= {("grouping", FIELDS), ("parity", "count_bolt/default"),
                                     ("order", FIELDS)}


def test_one_tuple_lost_fails_parity_and_strict_delivery(storm_side, tmp_path, spark,
                                                        monkeypatch):
    result = against_storm(storm_side, tmp_path / "run", spark, monkeypatch,
                           "drop-one:count_bolt:10")
    # The lost tuple's tree timed out and the spout was told: the guarantee held, and
    # the running counts show the loss.
    assert failing(result) == [("parity", "count_bolt/default")]
    delivery = verdicts(result)[("delivery", "word_spout")]
    assert "1 given up" in delivery.runtime and "0 given up" in delivery.storm, delivery
    # Word count replays nothing by itself: a strict scenario compares each id's history.
    strict = analyse(tmp_path / "run", replace(SCENARIO, delivery="strict"), spark=spark)
    assert failing(strict) == [("delivery", "word_spout"), ("parity", "count_bolt/default")]
    detail = verdicts(strict)[("delivery", "word_spout")].detail
    assert "both: 1 of " in detail and "runtime: given up after 1 emit" in detail, detail
