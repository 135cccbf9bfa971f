"""A heronpy project's configured log folder, as a streamparse project's: its components'
loggers write files there (created if need be) at the configured level, size and
backups, or in their task's log folder, with one warning, when it cannot be used."""

from __future__ import annotations

import json
import logging
import textwrap
from pathlib import Path

import pytest
from testkit import Running, wait_until

from heronbridge.compat.heronpy.loader import load_file
from heronbridge.compat.projects import load_project
from heronbridge.runtime.plan import TaskLayout
from heronbridge.shims.storm import keys

WORDCOUNT = Path(__file__).resolve().parents[3] / "examples" / "heronpy" / "wordcount.py"
MAX_BYTES, BACKUPS = 200, 5

TOPOLOGY = textwrap.dedent("""
    from heronpy.api.stream import Grouping
    from heronpy.api.topology import Topology

    from parts import Numbers, Talker


    class Talk(Topology):
        numbers = Numbers.spec()
        talker = Talker.spec(inputs={numbers: Grouping.SHUFFLE})
""")

PARTS = textwrap.dedent("""
    import time

    from heronpy.api.bolt.bolt import Bolt
    from heronpy.api.spout.spout import Spout


    class Numbers(Spout):
        outputs = ["n"]

        def initialize(self, config, context):
            self.n = 0

        def next_tuple(self):
            if self.n < 3:
                self.emit([self.n])
                self.n += 1
            else:
                time.sleep(0.01)


    class Talker(Bolt):
        def initialize(self, config, context):
            pass

        def process(self, tup):
            n = tup.values[0]
            self.logger.debug("debug line %s", n)
            self.logger.info("info line %s", n)
            self.log("log line %s" % n, "warn")
""")


def heronpy_project(tmp_path: Path, folder: Path) -> Path:
    project = tmp_path / "project"
    (project / "topologies").mkdir(parents=True)
    (project / "src").mkdir()
    (project / "topologies" / "talk.py").write_text(TOPOLOGY)
    (project / "src" / "parts.py").write_text(PARTS)
    log = {"path": str(folder), "level": "info", "max_bytes": MAX_BYTES,
           "backup_count": BACKUPS}
    (project / "config.json").write_text(json.dumps(
        {"serializer": "json", "topology_specs": "topologies/",
         "envs": {"test": {"log": log, "options": {}}}}))
    return project


def talker_text(folder: Path, task: int) -> str:
    return "".join(p.read_text() for p in folder.glob(f"pystorm_talk_talker_{task}_*.log*"))


@pytest.mark.integration
@pytest.mark.parametrize("case", ["exists", "creatable", "unwritable", "no parent"])
def test_heronpy_components_log_to_the_configured_folder_or_else_the_tasks(
        home, state, tmp_path, caplog, case):
    if case == "exists":
        folder = tmp_path / "logs"
        folder.mkdir()
    elif case == "creatable":  # made only where its parent exists
        folder = tmp_path / "logs"
    elif case == "no parent":
        folder = tmp_path / "new" / "logs"
    else:
        (tmp_path / "afile").write_text("not a folder")
        folder = tmp_path / "afile" / "logs"
    with caplog.at_level(logging.WARNING, "heronbridge.compat"):
        project = load_project(heronpy_project(tmp_path, folder), "talk",
                               resources=home.workdir("talk") / "resources")
    warnings = [r.getMessage() for r in caplog.records if r.name == "heronbridge.compat"]
    with Running(project.plan, home, state, project) as running:
        refused = case in ("unwritable", "no parent")
        used = running.workdir / "container-0" / "logs" if refused else folder
        task = TaskLayout.of(running.plan).component_tasks["talker"][0]
        wait_until(lambda: "log line 2" in talker_text(used, task), 30,
                   "the talker's log file", on_timeout=running.logs)
    text = talker_text(used, task)
    for n in range(3):
        assert f"- INFO - info line {n}" in text and f"- WARNING - log line {n}" in text
    assert "debug line" not in text  # log.level is info
    files = list(used.glob(f"pystorm_talk_talker_{task}_*.log*"))
    assert 1 < len(files) <= BACKUPS + 1
    assert all(p.stat().st_size <= MAX_BYTES for p in files)
    task_log = (running.workdir / "container-0" / "logs" / f"task-{task}-talker.log").read_text()
    assert "info line" not in task_log  # the file holds them, as pystorm's would
    if refused:
        [warning] = warnings
        assert str(folder) in warning and f"{running.workdir}/container-N/logs/" in warning
    else:
        assert warnings == []


def test_a_heronpy_file_whose_log_path_cannot_be_made_is_marked_with_one_warning(
        tmp_path, caplog):
    (tmp_path / "afile").write_text("not a folder")
    folder = str(tmp_path / "afile" / "logs")
    with caplog.at_level(logging.WARNING, "heronbridge.compat"):
        plan = load_file(WORDCOUNT, options={"pystorm.log.path": folder})
    [warning] = [r.getMessage() for r in caplog.records if r.name == "heronbridge.compat"]
    assert folder in warning and "container-N/logs/" in warning
    assert plan.config[keys.LOG_FALLBACK] == folder
