"""The wheel carries everything a user runs: installed into a fresh virtualenv under a
temporary folder, far from this checkout (none of it on sys.path, no variable naming a
jar), `heronbridge --help` answers and a streamparse project whose spout and one bolt are
storm-client's own Java test components runs with no other step, its Python bolts
recording their tuples; the docs it carries are served. The wheel is the one tox built
for every env ($TOX_PACKAGE), else one built here from this checkout."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

pytestmark = [pytest.mark.jvm, pytest.mark.integration]

ROOT = Path(__file__).resolve().parents[2]
TESTWORDS = Path(__file__).resolve().with_name("projects") / "testwords"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    built = [Path(p) for p in os.environ.get("TOX_PACKAGE", "").split(os.pathsep)
             if p.endswith(".whl")]
    if built:
        return built[0]
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out),
                    str(ROOT)], check=True, capture_output=True, timeout=1800)
    return next(out.glob("heronbridge-*.whl"))


@pytest.fixture(scope="module")
def fresh(wheel, tmp_path_factory) -> Path:
    """A temporary folder holding a virtualenv (venv/) with the wheel and its
    dependencies installed, by uv (heronbridge's own dependency: seconds, not minutes)."""
    root = tmp_path_factory.mktemp("fresh")
    uv = [sys.executable, "-m", "uv"]
    subprocess.run([*uv, "venv", "-q", "--python", sys.executable, str(root / "venv")],
                   check=True, capture_output=True, timeout=300)
    subprocess.run([*uv, "pip", "install", "-q", "--python", str(root / "venv" / "bin" /
                                                                 "python"), str(wheel)],
                   check=True, capture_output=True, timeout=900, cwd=root)
    return root


def clean_env(root: Path) -> dict[str, str]:
    """The environment of a user's shell: nothing that points into a checkout."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTHON", "HERONBRIDGE_", "VIRTUAL_ENV", "TOX_"))}
    env["PATH"] = os.pathsep.join([str(root / "venv" / "bin"), "/usr/local/bin", "/usr/bin",
                                   "/bin"])
    return env


def test_the_installed_package_is_the_wheel_s_with_its_jar_and_help(fresh):
    env = clean_env(fresh)
    where = subprocess.run(
        [str(fresh / "venv" / "bin" / "python"), "-c",
         "import json, sys, heronbridge; from heronbridge.jvm.host import host_jar; "
         "print(json.dumps([heronbridge.__file__, str(host_jar()), sys.path]))"],
        capture_output=True, text=True, env=env, cwd=fresh, timeout=120, check=True)
    package, jar, path = json.loads(where.stdout)
    site = fresh / "venv" / "lib"
    assert Path(package).is_relative_to(site) and Path(jar).is_relative_to(site), where.stdout
    assert not [p for p in path if p and Path(p).resolve().is_relative_to(ROOT)], path
    shown = subprocess.run([str(fresh / "venv" / "bin" / "heronbridge"), "--help"],
                           capture_output=True, text=True, env=env, cwd=fresh, timeout=120,
                           check=False)
    assert shown.returncode == 0, shown.stderr
    assert "run" in shown.stdout and "heronbridge docs" in shown.stdout, shown.stdout
    page = subprocess.run([str(fresh / "venv" / "bin" / "heronbridge"), "docs", "reference/cli",
                           "--text"], capture_output=True, text=True, env=env, cwd=fresh,
                          timeout=120, check=False)
    assert page.returncode == 0 and "heronbridge run" in page.stdout, page.stderr  # bundled


def test_a_project_with_storm_s_java_test_components_runs_from_the_wheel(fresh, storm_home):
    project = fresh / "testwords"
    shutil.copytree(TESTWORDS, project)
    out = fresh / "out"
    done = subprocess.run(
        [str(fresh / "venv" / "bin" / "heronbridge"), "run", "--project", str(project),
         "--home", str(storm_home), "-o", f"words.out={out}", "-t", "12"],
        capture_output=True, text=True, env=clean_env(fresh), cwd=fresh, timeout=600,
        check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    assert "building the JVM task host" not in done.stderr  # the wheel brought it
    relayed = Counter(json.loads(line) for f in out.glob("relay-*.jsonl")
                      for line in f.read_text().splitlines())
    counted: dict[str, list[int]] = {}
    for f in out.glob("sink-*.jsonl"):
        for line in f.read_text().splitlines():
            word, count = json.loads(line)
            counted.setdefault(word, []).append(count)
    assert relayed and counted, done.stderr[-4000:]
    # TestWordSpout's words, each counted by TestWordCounter once per time the relay
    # passed it (the last few may still be on their way when the run stops).
    assert set(relayed) <= {"nathan", "mike", "jackson", "golda", "bertels"}
    for word, counts in counted.items():
        assert sorted(counts) == list(range(1, len(counts) + 1)), (word, counts)
        assert len(counts) <= relayed[word], (word, counts, relayed[word])
