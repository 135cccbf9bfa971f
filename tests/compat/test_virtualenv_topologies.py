"""Two streamparse projects that pin different major versions of one library (semver 2
and 3, from the package index) run at once, each task in its topology's own virtualenv:
every task reports the version its own project pins, in-process and as a multilang
subprocess alike. A second run reuses the cached virtualenv."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

EXAMPLES = Path(__file__).parents[2] / "examples" / "virtualenvs"
PINS = {"semver2": "2.13.0", "semver3": "3.0.4"}
TASKS = {"report_bolt-2", "report_bolt-3", "version_spout-4"}  # task 1: the acker


def start(name: str, home: Path, out: Path, *extra: str) -> subprocess.Popen:
    out.mkdir(parents=True, exist_ok=True)
    return subprocess.Popen(
        [sys.executable, "-m", "heronbridge", "run", "-t", "2", "--project",
         str(EXAMPLES / name), "--home", str(home), "-o", f"pins.output.dir={out}", *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(proc: subprocess.Popen) -> str:
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, f"{stdout}\n{stderr}"
    return stderr


def reports(out: Path) -> dict[str, dict]:
    return {p.stem: json.loads(p.read_text()) for p in out.glob("*.json")}


def test_conflicting_pins_run_side_by_side_each_task_in_its_own_virtualenv(tmp_path):
    home = tmp_path / "home"
    runs = {"semver2": start("semver2", home, tmp_path / "semver2"),
            "semver3": start("semver3", home, tmp_path / "semver3", "--multilang")}
    said = {name: finish(proc) for name, proc in runs.items()}
    for name, version in PINS.items():
        assert f"topology {name!r}: building its virtualenv from" in said[name], said[name]
        got = reports(tmp_path / name)
        assert set(got) == TASKS, (got, said[name])
        for task, record in got.items():
            assert record["semver"] == version, (name, task, record)
            assert Path(record["prefix"]).parent == home / "virtualenvs", record
    # Two virtualenvs, one per pin; the multilang children ran in theirs too (above).
    assert reports(tmp_path / "semver2")["report_bolt-2"]["prefix"] != \
        reports(tmp_path / "semver3")["report_bolt-2"]["prefix"]

    again = tmp_path / "again"
    stderr = finish(start("semver2", home, again))
    assert "topology 'semver2': reusing its virtualenv" in stderr, stderr
    assert "building" not in stderr, stderr
    assert {r["semver"] for r in reports(again).values()} == {PINS["semver2"]}
