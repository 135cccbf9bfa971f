"""The log settings a component gets, checked without starting anything: which folder
(the configured one, or the task's), and how its lines are written."""

from __future__ import annotations

import io
import logging
from pathlib import Path
from types import SimpleNamespace

import pytest

from heronbridge.compat.streamparse import check_log_path
from heronbridge.runtime import Grouping, TopologyBuilder
from heronbridge.runtime.api import TopologyContext
from heronbridge.shims.common import logs
from heronbridge.shims.common.handshake import storm_conf
from heronbridge.shims.storm import keys


def plan(log_path: str | None, bolt_log_path: str | None = None):
    config = {} if log_path is None else {logs.PATH: log_path, logs.MAX_BYTES: 10}
    b = TopologyBuilder("t", config)
    b.spout("spout", "probe:Spout", outputs=["n"])
    b.bolt("bolt", "probe:Bolt", inputs={"spout": Grouping.SHUFFLE},
           config={} if bolt_log_path is None else {logs.PATH: bolt_log_path})
    return b.build()


@pytest.fixture
def task_logs(tmp_path, monkeypatch) -> Path:
    """The task's own log folder (in a task: where its stderr goes)."""
    folder = tmp_path / "task-logs"
    monkeypatch.setattr(logs, "task_log_dir", lambda: folder)
    return folder


def conf_of(p, component: str) -> dict:
    task = 2 if component == "spout" else 1
    return storm_conf(TopologyContext.build(p, "t-1", task))


def test_a_usable_or_creatable_folder_is_kept_and_created_and_the_task_shows_it(tmp_path):
    (tmp_path / "exists").mkdir()
    for folder in (tmp_path / "exists", tmp_path / "new"):
        p = plan(str(folder))
        assert check_log_path(p) == []
        assert folder.is_dir() and keys.LOG_FALLBACK not in p.config
        assert conf_of(p, "spout")[logs.PATH] == str(folder)


@pytest.mark.parametrize("where", ["deep", "root"])
def test_a_folder_is_created_only_where_its_parent_exists_and_not_at_the_root(
        tmp_path, task_logs, caplog, where):
    """A project's Storm log folder (/var/log/storm/streamparse, /Users/..., /logs) is not
    made here: the topology's own log folder is used, and the warning says so once."""
    folder = str(tmp_path / "var" / "log" / "storm") if where == "deep" else \
        f"/heronbridge-test-{tmp_path.name}"
    p = plan(folder)
    with caplog.at_level(logging.WARNING, "heronbridge.compat"):
        [text] = check_log_path(p, tmp_path / "hb" / "current")
    assert not Path(folder).exists() and not (tmp_path / "var").exists()
    assert len(caplog.records) == 1
    assert ("its parent folder" in text and "does not exist here" in text) if where == "deep" \
        else "at the file system's root" in text
    assert conf_of(p, "spout")[logs.PATH] == str(task_logs)


def test_an_unusable_folder_gives_way_to_the_tasks_own_with_one_warning(
        tmp_path, task_logs, caplog):
    (tmp_path / "afile").write_text("")
    folder = str(tmp_path / "afile" / "logs")
    p = plan(folder, bolt_log_path=str(tmp_path / "bolt-logs"))
    with caplog.at_level(logging.WARNING, "heronbridge.compat"):
        [text] = check_log_path(p, tmp_path / "hb" / "current")
    assert [r.getMessage() for r in caplog.records] == [f"warning: {text}"]
    assert folder in text and "Not a directory" in text
    assert f"{tmp_path}/hb/current/container-N/logs/" in text and "-o pystorm.log.path=" in text
    spout, bolt = conf_of(p, "spout"), conf_of(p, "bolt")
    assert spout[logs.PATH] == str(task_logs) and spout[logs.MAX_BYTES] == 10
    assert bolt[logs.PATH] == str(tmp_path / "bolt-logs")  # its own folder is fine
    assert not any(k.startswith("heronbridge.") for k in spout)


def test_a_relative_folder_is_the_tasks_to_check_in_its_working_folder(
        tmp_path, task_logs, caplog):
    p = plan("logs/here")
    assert check_log_path(p) == [] and keys.LOG_FALLBACK not in p.config
    assert logs.log_folder(p.config, str(tmp_path), "task 1") == "logs/here"
    assert (tmp_path / "logs" / "here").is_dir()
    (tmp_path / "afile").write_text("")
    with caplog.at_level(logging.WARNING, "heronbridge.storm.logs"):
        assert logs.log_folder({logs.PATH: "afile/x"}, str(tmp_path), "task 1") == \
            str(task_logs)
        logs.log_folder({logs.PATH: "afile/x"}, str(tmp_path), "task 1")
    [warning] = caplog.records  # once per task, however many ask
    assert "task 1" in warning.getMessage() and str(task_logs) in warning.getMessage()


def test_pystorm_lines_reach_the_task_log_as_pystorm_formatted_them(monkeypatch):
    stderr = io.StringIO()
    monkeypatch.setattr("sys.stderr", stderr)
    lines = logs.pystorm_lines()
    lines(logging.DEBUG, "2026-01-01 00:00:00,000 - pystorm.component.x - a debug line")
    assert stderr.getvalue() == "2026-01-01 00:00:00,000 - pystorm.component.x - a debug line\n"

    sent = []
    component = SimpleNamespace(storm_conf={logs.FORMAT: "%(levelname)s|%(name)s|%(message)s"},
                                logger=logging.getLogger("pystorm.component.x"))
    component.log = lambda message, level=None: sent.append((message, level))
    logs.prefixed_log(component)("bare", "warn")
    assert sent == [("WARNING|pystorm.component.x|bare", "warn")]
