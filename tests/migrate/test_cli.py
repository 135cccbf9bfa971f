"""`heronbridge migrate` as a user runs it: the installed command on a tree of files."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from testkit import heronbridge

from heronbridge.migrate.runner import migrate

BOLT = (
    "# comment above\n"
    "from streamparse import Bolt  # beside\n"
    "\n"
    "\n"
    "class Up(Bolt):\n"
    "    auto_ack = False\n"
    "    auto_anchor = False\n"
    "    auto_fail = False\n"
    "\n"
    "    def process(self, tup):\n"
    "        self.emit([tup.values[0].upper()], stream=None)\n"
)
MIGRATED = BOLT.replace("from streamparse import Bolt",
                        "from heronpy.api.bolt.bolt import Bolt").replace(", stream=None)", ")")
UNSUPPORTED = "from streamparse import StormHandler\n\nHANDLER = StormHandler\n"


def run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return heronbridge("migrate", *args, cwd=tmp_path)


def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "bolt.py").write_text(BOLT)
    (root / "pkg" / "other.py").write_text("import os\n")
    return root


def test_check_and_diff_write_nothing(tmp_path: Path) -> None:
    root = project(tmp_path)
    check = run(tmp_path, str(root), "--check")
    assert check.returncode == 1, check.stderr
    diff = run(tmp_path, str(root), "--diff")
    assert diff.returncode == 0, diff.stderr
    assert "+from heronpy.api.bolt.bolt import Bolt  # beside" in diff.stdout
    assert (root / "pkg" / "bolt.py").read_text() == BOLT


@pytest.mark.compat("cli/heronbridge migrate")
def test_migrates_in_place_then_nothing_is_left(tmp_path: Path) -> None:
    root = project(tmp_path)
    done = run(tmp_path, str(root), "--report", str(tmp_path / "report.json"))
    assert done.returncode == 0, done.stderr
    assert (root / "pkg" / "bolt.py").read_text() == MIGRATED
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["summary"]["changed"] == 1 and report["summary"]["failed"] == 0
    assert {e["rule"] for e in report["entries"]} == {"HB005", "HB009"}
    assert all(e["status"] == "converted" for e in report["entries"])
    assert run(tmp_path, str(root), "--check").returncode == 0


def test_a_broken_file_is_reported_and_the_rest_migrated(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / "pkg" / "broken.py").write_text("from streamparse import Bolt\nclass (:\n")
    (root / "pkg" / "shell.py").write_text(UNSUPPORTED)
    done = run(tmp_path, str(root), "--report", str(tmp_path / "report.json"))
    assert done.returncode == 2
    assert "broken.py" in done.stderr and "does not parse" in done.stderr
    assert "HB009: heronpy has no StormHandler" in done.stderr  # the warning
    assert (root / "pkg" / "bolt.py").read_text() == MIGRATED
    assert (root / "pkg" / "shell.py").read_text().startswith(
        "# TODO(heronbridge:HB009): heronpy has no StormHandler\n")
    report = json.loads((tmp_path / "report.json").read_text())
    assert [f["path"].endswith("broken.py") for f in report["failed"]] == [True]
    assert [e["status"] for e in report["entries"] if e["rule"] == "HB009" and
            e["path"].endswith("shell.py")] == ["todo"]


def test_rule_selection_and_unknown_rules(tmp_path: Path) -> None:
    root = project(tmp_path)
    only = run(tmp_path, str(root), "--rule", "component-api", "--jobs", "1")
    assert only.returncode == 0, only.stderr
    text = (root / "pkg" / "bolt.py").read_text()
    assert "from streamparse import Bolt" in text and "stream=None" not in text
    bad = run(tmp_path, str(root), "--rule", "HB999")
    assert bad.returncode == 1 and "unknown rule 'HB999'" in bad.stderr


def test_windows_newlines_survive(tmp_path: Path) -> None:
    root = project(tmp_path)
    path = root / "pkg" / "bolt.py"
    path.write_bytes(BOLT.replace("\n", "\r\n").encode())
    assert run(tmp_path, str(root)).returncode == 0
    assert path.read_bytes() == MIGRATED.replace("\n", "\r\n").encode()


ROUTER = (
    "from streamparse import Bolt, Stream\n"
    "\n"
    "\n"
    "class Router(Bolt):\n"
    "    outputs = [Stream(['n'], 'routed', direct=True)]\n"
    "\n"
    "    def process(self, tup):\n"
    "        self.log(self.pid, self.serializer)\n"
)


def test_the_summary_separates_rewrites_from_markers_and_names_what_refuses(tmp_path: Path):
    root = project(tmp_path)
    (root / "pkg" / "router.py").write_text(ROUTER)
    done = run(tmp_path, str(root), "--report", str(tmp_path / "report.json"))
    assert done.returncode == 0, done.stderr
    assert "rewritten: " in done.stderr and "each changed file compiled" in done.stderr
    assert "marked for you: 2 TODO markers (HB005 1, HB006 1)" in done.stderr
    assert "refusing to run until their markers are resolved" in done.stderr
    summary = json.loads((tmp_path / "report.json").read_text())["summary"]
    assert summary["marked"] == {"HB005": 1, "HB006": 1}
    # pid, set in an added initialize of both bolts (the tree reads it: helpers may read
    # it from any component they are given)
    assert summary["rewritten"]["HB002"] == 2
    assert sum(summary["rewritten"].values()) == summary["converted"]
    assert summary["refusing"] == ["pkg.router.Router"]
    text = (root / "pkg" / "router.py").read_text()
    assert "self.pid = os.getpid()" in text and "@unported(" in text
    again = run(tmp_path, str(root), "--check")  # nothing left: it says so plainly
    assert again.returncode == 0, again.stderr
    assert "rewritten: nothing (no rule found anything to rewrite)" in again.stderr
    assert "each changed file compiled" not in again.stderr


EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "storm_topologies"


def applies(tmp_path: Path, project: Path) -> None:
    """`migrate --diff` of `project`, applied by git apply and by patch -p1 to copies of
    it, makes the tree `migrate` makes in place."""
    diff = heronbridge("migrate", ".", "--diff", "--jobs", "1", cwd=project, text=False,
                       timeout=300)
    assert diff.returncode == 0, diff.stderr.decode()
    assert diff.stdout.startswith(b"--- a/"), diff.stdout[:200]
    (tmp_path / "m.diff").write_bytes(diff.stdout)
    expected = tmp_path / "expected"
    shutil.copytree(project, expected)
    assert not migrate(expected, jobs=1).failed
    for tool in (["git", "apply", "-v"], ["patch", "-p1", "--quiet", "--input"]):
        copy = tmp_path / tool[0]
        shutil.copytree(project, copy)
        applied = subprocess.run([*tool, str(tmp_path / "m.diff")], cwd=copy,
                                 capture_output=True, text=True, check=False, timeout=60)
        assert applied.returncode == 0, (tool, applied.stdout, applied.stderr)
        for path in expected.rglob("*.py"):
            rel = path.relative_to(expected)
            assert (copy / rel).read_bytes() == path.read_bytes(), (tool, rel)


@pytest.mark.parametrize("example", sorted(p.parent.name for p in EXAMPLES.glob("*/config.json")))
def test_the_diff_applies_with_git_and_patch(example: str, tmp_path: Path) -> None:
    project = tmp_path / example
    shutil.copytree(EXAMPLES / example, project,
                    ignore=shutil.ignore_patterns("__pycache__", ".ruff_cache"))
    applies(tmp_path, project)


def test_the_diff_of_files_without_a_final_newline_and_with_crlf_applies(tmp_path: Path):
    project = tmp_path / "project"
    (project / "pkg").mkdir(parents=True)
    (project / "pkg" / "bolt.py").write_text(BOLT.rstrip("\n"))  # no final newline
    (project / "pkg" / "windows.py").write_bytes(BOLT.replace("\n", "\r\n").encode())
    (project / "pkg" / "after.py").write_text(BOLT.replace("Up", "After"))
    diff = heronbridge("migrate", str(project), "--diff", cwd=tmp_path, text=False).stdout
    assert b"+++ b/pkg/bolt.py" in diff and b"/project/" not in diff
    assert b"\n\\ No newline at end of file\n" in diff
    applies(tmp_path, project)
