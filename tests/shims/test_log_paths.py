"""The log folder a project's config.json names: used when it exists and is writable,
created when it can be, otherwise replaced by each task's log folder with one warning;
the level, size and backups keep their meaning in every case."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import pytest
from testkit import heronbridge, read_jsonl, wait_until

from heronbridge.runtime.plan import TaskLayout

pytestmark = pytest.mark.integration

PROJECT = Path(__file__).parent / "project"
MAX_BYTES, BACKUPS = 150, 5


def log_folder(tmp_path: Path, case: str) -> Path:
    """The folder config.json names: one that exists, one that can be created, and one
    that cannot (under a regular file: root may write anywhere else)."""
    if case == "exists":
        (tmp_path / "logs").mkdir()
        return tmp_path / "logs"
    if case == "creatable":  # its parent exists (see test_log_settings for the others)
        return tmp_path / "new-logs"
    (tmp_path / "afile").write_text("not a folder")
    return tmp_path / "afile" / "logs"


def project_logging_to(tmp_path: Path, folder: Path) -> Path:
    project = tmp_path / "project"
    shutil.copytree(PROJECT, project, ignore=shutil.ignore_patterns("__pycache__"))
    config = json.loads((project / "config.json").read_text())
    config["envs"]["test"]["log"] = {"path": str(folder), "level": "info",
                                     "max_bytes": MAX_BYTES, "backup_count": BACKUPS}
    (project / "config.json").write_text(json.dumps(config))
    return project


def talker_files(folder: Path, task: int) -> list[Path]:
    return sorted(folder.glob(f"pystorm_logs_talker_{task}_*.log*"))


def talker_text(folder: Path, task: int) -> str:
    return "".join(p.read_text() for p in talker_files(folder, task))


def check_files(folder: Path, task: int, out: Path) -> None:
    """The talker's lines are in `folder` at its level, in files rotated at MAX_BYTES;
    the component saw the folder and the other settings as configured."""
    text = talker_text(folder, task)
    for line in ("info line 0", "warning line 0", "error line 0", "module logger line"):
        assert line in text
    assert "debug line 0" not in text  # log.level is info
    files = talker_files(folder, task)
    assert 1 < len(files) <= BACKUPS + 1
    assert all(p.stat().st_size <= MAX_BYTES for p in files)
    [conf] = read_jsonl(out, "conf-talker-*.jsonl").values()
    assert conf[0]["log"] == {"pystorm.log.path": str(folder), "pystorm.log.level": "info",
                              "pystorm.log.max_bytes": MAX_BYTES,
                              "pystorm.log.backup_count": BACKUPS}


# In-process, the unwritable case runs through the command line (the last test).
@pytest.mark.parametrize(("case", "multilang"), [
    ("exists", False), ("exists", True), ("creatable", False), ("creatable", True),
    ("unwritable", True)], ids=["exists-in-process", "exists-multilang",
                                "creatable-in-process", "creatable-multilang",
                                "unwritable-multilang"])
def test_pystorm_log_files_go_to_the_configured_folder_or_else_the_tasks(
        run_project, tmp_path, caplog, case, multilang):
    folder, out = log_folder(tmp_path, case), tmp_path / "out"
    project = project_logging_to(tmp_path, folder)
    options = {"test.out": str(out), "test.count": 3}
    with caplog.at_level(logging.WARNING, "heronbridge.compat"), \
            run_project(project, "logs", options, multilang) as running:
        task = TaskLayout.of(running.plan).component_tasks["talker"][0]
        used = running.workdir / "container-0" / "logs" if case == "unwritable" else folder
        wait_until(lambda: "module logger line" in talker_text(used, task), 30,
                   "the talker's log file", on_timeout=running.logs)
        check_files(used, task, out)
    warnings = [r.getMessage() for r in caplog.records if r.name == "heronbridge.compat"]
    if case != "unwritable":
        assert warnings == []
        return
    [warning] = warnings
    assert str(folder) in warning and "pystorm.log.path=" in warning
    assert f"{running.workdir}/container-N/logs/" in warning


def test_run_warns_once_and_logs_to_the_tasks_folder_when_the_path_cannot_be_made(tmp_path):
    folder, out, home = log_folder(tmp_path, "unwritable"), tmp_path / "out", tmp_path / "hb"
    project = project_logging_to(tmp_path, folder)
    done = heronbridge("run", "--project", str(project), "-n", "logs", "-t", "3", "--home",
                       str(home), "-o", f"test.out={out}", "-o", "test.count=3")
    assert done.returncode == 0, done.stderr
    assert done.stderr.count(str(folder)) == 1, done.stderr
    workdir = home / "topologies" / "logs" / "current"
    assert f"{workdir}/container-N/logs/" in done.stderr
    assert "-o pystorm.log.path=DIR" in done.stderr and "log.path in config.json" in done.stderr
    talker = next(workdir.glob("container-0/logs/pystorm_logs_talker_*.log"))
    check_files(talker.parent, int(talker.name.split("_")[3]), out)
    assert (tmp_path / "afile").is_file()
