"""Scenario files: what they may say, and the errors for what they may not."""

from __future__ import annotations

from pathlib import Path

import pytest

from heronbridge.conformance import ConformanceError
from heronbridge.conformance import scenario as scenarios
from heronbridge.conformance.scenario import input_files

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "storm_topologies"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(text)
    return path


def test_every_example_scenario_loads_and_names_a_project_that_exists():
    files = sorted((EXAMPLES / "scenarios").glob("*.yaml"))
    assert len(files) >= 7
    for path in files:
        s = scenarios.load(path)
        assert (s.project / "config.json").is_file(), path
        assert s.name == path.stem


def test_a_full_scenario(tmp_path):
    (tmp_path / "words.txt").write_text("a b\n")
    s = scenarios.load(write(tmp_path, """
name: fails
project: ../p
topology: t
environment: prod
config: {topology.message.timeout.secs: 5}
input:
  options: {n: 3}
  files: {data/words.txt: words.txt}
faults:
  - {component: b, kind: fail, every: 7}
  - {component: c, task_index: 1, kind: exit, after: 10}
checks: [parity, delivery]
delivery: strict
divergences:
  - {check: parity, subject: "b/*", reason: timing, system: storm}
tuples: 500
seconds: 20
seed: 4
timeout: 60
quiet: 2
"""))
    assert s.name == "fails" and s.project == (tmp_path.parent / "p").resolve()
    assert s.storm_options() == {"n": 3, "topology.message.timeout.secs": 5}
    assert s.files == {"data/words.txt": tmp_path / "words.txt"}
    assert s.faults == [
        {"component": "b", "task_index": None, "kind": "fail", "every": 7},
        {"component": "c", "task_index": 1, "kind": "exit", "after": 10}]
    assert s.checks == ("parity", "delivery")
    assert s.delivery == "strict"
    assert s.divergences == [scenarios.Divergence("parity", "b/*", "timing", "storm")]
    assert (s.timeout, s.quiet) == (60.0, 2.0)
    assert (s.tuples, s.seconds, s.seed) == (500, 20.0, 4)
    assert s.bound() == {"tuples": 500, "seconds": 20.0} and s.bounded


@pytest.mark.parametrize(("text", "expected"), [
    ("project: p\nfualts: []\n", "keys among"),
    ("topology: t\n", "'project'"),
    ("- a\n", "a mapping at the top"),
    ("project: p\nfaults: [{component: b, kind: crash, every: 2}]\n", "kind among"),
    ("project: p\nfaults: [{component: b, kind: fail, after: 2}]\n", "fail fault with keys"),
    ("project: p\nfaults: [{component: b, kind: fail, every: 0}]\n", "whole number >= 1"),
    ("project: p\nchecks: [speed]\n", "checks: a list among"),
    ("project: p\ndelivery: exact\n", "delivery: one of"),
    ("project: p\ndivergences: [{check: parity}]\n", "a check among"),
    ("project: p\ndivergences: [{check: parity, reason: r, system: flink}]\n",
     "system among"),
    ("project: p\ninput: {data: x}\n", "input keys"),
    ("project: p\nmigrated: {divergences: [{check: run, reason: r}]}\n", "marker: HBnnn"),
    ("project: p\nmigrated: {known: []}\n", "'divergences'"),
    ("project: [\n", "not valid YAML"),
    ("project: p\ntuples: -1\n", "tuples: a whole number >= 0"),
    ("project: p\ntuples: 2.5\n", "tuples: a whole number >= 0"),
    ("project: p\nseconds: soon\n", "seconds: a number >= 0"),
    ("project: p\nseed: lucky\n", "seed: a whole number, or false"),
])
def test_a_bad_scenario_is_refused_with_what_was_expected(tmp_path, text, expected):
    path = write(tmp_path, text)
    with pytest.raises(ConformanceError, match=expected) as err:
        scenarios.load(path)
    assert str(path) in str(err.value)


def test_the_default_scenario_is_the_project_as_it_is(tmp_path):
    s = scenarios.default(tmp_path, "wc")
    assert (s.project, s.topology, s.faults, s.checks, s.name) == \
        (tmp_path.resolve(), "wc", [], None, "wc")
    # bounded and seeded unless told otherwise
    assert (s.tuples, s.seconds, s.seed) == (scenarios.DEFAULT_TUPLES, None, 0)


def test_the_command_line_s_bound_overrides_the_scenario_s(tmp_path):
    s = scenarios.load(write(tmp_path, "project: p\ntuples: 0\nseed: false\n"))
    assert (s.tuples, s.seed, s.bounded) == (None, None, False)
    assert scenarios.bounded(s, 100, None).tuples == 100
    both = scenarios.bounded(scenarios.default(tmp_path), 0, 2.5)
    assert (both.tuples, both.seconds) == (None, 2.5)
    assert scenarios.bounded(s).tuples is None
    with pytest.raises(ConformanceError, match="--tuples: a whole number >= 0"):
        scenarios.bounded(s, -3)


@pytest.mark.parametrize("rel", ["../outside.txt", "/etc/passwd", "data/../../x", "a/../b"])
def test_input_files_must_stay_inside_src_on_either_system(tmp_path, rel):
    f = tmp_path / "f.txt"
    f.write_text("x")
    with pytest.raises(ConformanceError, match="inside the project's src/"):
        input_files({rel: f})


def test_input_files_are_named_by_posix_path_and_must_exist(tmp_path):
    f = tmp_path / "f.txt"
    f.write_text("x")
    assert input_files({"data/./w.txt": f}) == {"data/w.txt": f}
    with pytest.raises(ConformanceError, match=r"input file 'data/w.txt': expected a file at"):
        input_files({"data/w.txt": tmp_path / "nope.txt"})


def test_migrated_divergences_need_the_marker_that_explains_them(tmp_path):
    from types import SimpleNamespace

    from heronbridge.conformance.conform import _explained

    path = write(tmp_path, "project: p\nmigrated:\n  divergences:\n"
                           "    - {check: run, system: runtime, marker: HB006, reason: r}\n")
    scenario = scenarios.load(path)
    marked = SimpleNamespace(todos=[SimpleNamespace(rule="HB006")])
    assert [d.marker for d in _explained(scenario, marked)] == ["HB006"]
    unmarked = SimpleNamespace(todos=[SimpleNamespace(rule="HB005")])
    with pytest.raises(ConformanceError, match="names marker HB006"):
        _explained(scenario, unmarked)
