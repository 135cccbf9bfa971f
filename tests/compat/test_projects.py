"""Projects in streamparse's layout, whichever API their topology is written in."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from heronbridge.compat import CompatError
from heronbridge.compat.heronpy.loader import HOST_BOLT, HOST_SPOUT
from heronbridge.compat.projects import load_project, topology_name
from heronbridge.runtime.plan.tasks import TaskLayout
from heronbridge.shims.heronpy import keys

EXAMPLE = Path(__file__).parents[2] / "examples" / "storm_topologies" / "reliable"
MIGRATED = Path(__file__).parent / "migrated_reliable"


def migrated(tmp_path: Path) -> Path:
    """The reliable example as its migration to heronpy leaves it."""
    project = tmp_path / "reliable"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(MIGRATED, project, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("__pycache__", "README.md"))
    return project


def test_a_migrated_project_loads_as_heronpy_named_after_its_file(tmp_path):
    path = migrated(tmp_path)
    assert topology_name(path) == "reliable"
    project = load_project(path, options={"reliable.count": 7}, resources=tmp_path / "res")
    plan = project.plan
    assert (project.name, plan.name, project.env) == ("reliable", "reliable", "prod")
    assert project.topology.__name__ == "Reliable" and project.serializer == "json"
    numbers, checker = plan.components["numbers"], plan.components["checker"]
    assert (numbers.class_path, checker.class_path) == (HOST_SPOUT, HOST_BOLT)
    assert numbers.config[keys.CLASS] == "spouts.numbers.NumberSpout"
    assert numbers.config[keys.RESOURCES] == str(tmp_path / "res")
    assert plan.python_path == [str(tmp_path / "res"), str(path / "topologies")]
    # heronpy's defaults, then the environment's options, then the Topology's config, then
    # the command line's.
    assert plan.config["reliable.count"] == 7
    assert plan.config["topology.message.timeout.secs"] == 10
    assert plan.config["topology.reliability.mode"] == "ATLEAST_ONCE"
    assert plan.config["heronbridge.serializer"] == "json"
    assert project.source == path / "src"


def test_a_migrated_project_numbers_its_tasks_as_storm_numbers_the_original(tmp_path):
    original = load_project(EXAMPLE).plan
    heron = load_project(migrated(tmp_path)).plan
    assert original.components["numbers"].class_path != HOST_SPOUT  # streamparse's own
    assert TaskLayout.of(heron) == TaskLayout.of(original)
    assert heron.reserved == original.reserved == {"__acker": 1}


def test_environment_workers_become_stream_managers(tmp_path):
    path = migrated(tmp_path)
    config = json.loads((path / "config.json").read_text())
    config["envs"]["prod"]["options"]["topology.workers"] = 2
    (path / "config.json").write_text(json.dumps(config))
    plan = load_project(path).plan
    assert plan.config["topology.stmgrs"] == 2 and plan.reserved == {"__acker": 2}


def test_a_heronpy_project_refuses_multilang_and_reports_import_errors(tmp_path):
    path = migrated(tmp_path)
    with pytest.raises(CompatError, match=r"topology 'reliable': --multilang runs "
                                          r"streamparse components"):
        load_project(path, multilang=True)
    (path / "src" / "bolts" / "checker.py").write_text("import nowhere\n")
    with pytest.raises(CompatError, match=r"topology 'reliable': .*reliable.py' failed to "
                                          r"import: ModuleNotFoundError: No module named "
                                          r"'nowhere'"):
        load_project(path)


# -- running, traced ------------------------------------------------------------------------


def traced_run(path: Path, root: Path) -> list[dict]:
    """Run a project until every number has its last spout callback; its trace records."""
    from testkit import Running, wait_until

    from heronbridge.conformance.trace import tracefile
    from heronbridge.conformance.trace.hook import HOOK_PATH
    from heronbridge.conformance.trace.schema import TRACE_DIR
    from heronbridge.runtime.scheduler import Home
    from heronbridge.runtime.statemgr import open_statemgr
    from heronbridge.shims.storm.keys import HOOK

    home, traces = Home(root / "home"), root / "traces"
    options = {"reliable.count": COUNT, HOOK: HOOK_PATH, TRACE_DIR: str(traces),
               "example.output.dir": str(root / "out")}
    project = load_project(path, options=options, resources=home.workdir("reliable") /
                           "resources")

    def records() -> list[dict]:
        return sorted((r for path in tracefile.files(traces) for r in tracefile.read(path)),
                      key=lambda r: (r["t"], r["seq"]))

    def settled() -> bool:
        # Each task writes its records every 0.2 s: wait until the checker's answers are
        # on disk too, not only the spout's callbacks that followed them.
        done = records()
        story = spout_story(done)
        answered = sum(r["component"] == "checker" and r["ev"] in ("ack", "fail")
                       for r in done)
        return len(story) == COUNT and answered == sum(evs.count("emit") for evs in
                                                       story.values()) and all(
            evs[-1] == "spout_ack" or evs.count("spout_fail") == 4 for evs in story.values())

    with Running(project.plan, home, open_statemgr(home.state_uri), project) as running:
        wait_until(settled, 40, "every number settled", on_timeout=running.logs)
    return records()


COUNT = 35


def spout_story(records: list[dict]) -> dict[int, list[str]]:
    story: dict[int, list[str]] = {}
    for r in records:
        if r["component"] == "numbers" and r["ev"] in ("emit", "spout_ack", "spout_fail"):
            story.setdefault(json.loads(r["msg_id"]), []).append(r["ev"])
    return story


@pytest.mark.integration
def test_the_tracing_hook_records_a_migrated_project_as_it_records_the_original(tmp_path):
    original = traced_run(EXAMPLE, tmp_path / "streamparse")
    heron = traced_run(migrated(tmp_path), tmp_path / "heronpy")
    # Multiples of 31 fail four times (the spout then gives up); other multiples of 7
    # fail once; the rest are acked at once: the same story on both.
    expected = {n: ["emit", "spout_fail"] * 4 if n % 31 == 0 else
                ["emit", "spout_fail", "emit", "spout_ack"] if n % 7 == 0 else
                ["emit", "spout_ack"] for n in range(COUNT)}
    assert spout_story(original) == spout_story(heron) == expected

    def shapes(records):
        return {(r["component"], r["ev"], tuple(sorted(r))) for r in records}

    def starts(records):
        return {r["component"]: r["tasks"] for r in records if r["ev"] == "start"}

    assert shapes(heron) == shapes(original)
    assert starts(heron) == starts(original)
    answered = [(r["ev"], r["injected"]) for r in heron if r["ev"] in ("ack", "fail")]
    assert len(answered) == len([r for r in heron if r["ev"] == "recv"])
    assert Counter(answered) == Counter((r["ev"], r["injected"]) for r in original
                                        if r["ev"] in ("ack", "fail"))


def test_the_command_line_loads_a_migrated_project_and_a_heronpy_file(tmp_path):
    from heronbridge.cli import build_parser
    from heronbridge.cli.topology import load_plan
    from heronbridge.runtime.scheduler import Home

    home = Home(tmp_path / "home")
    args = build_parser().parse_args(["run", "--project", str(migrated(tmp_path)), "-o",
                                      "reliable.count=3"])
    prepared = load_plan(args, home)
    assert prepared.plan.components["numbers"].class_path == HOST_SPOUT
    assert prepared.plan.config["reliable.count"] == 3
    assert prepared.project.name == "reliable"
    wordcount = Path(__file__).parents[2] / "examples" / "heronpy" / "wordcount.py"
    args = build_parser().parse_args(["run", str(wordcount), "-o", "topology.stmgrs=2"])
    plan = load_plan(args, home).plan
    assert plan.name == "WordCount" and plan.reserved == {"__acker": 2}


def test_a_migrated_project_keeps_its_virtualenv_for_its_tasks(tmp_path):
    """Migration keeps virtualenvs/NAME.txt, and the topology its dependencies: the
    virtualenv is built, the classes import with its packages, and the tasks run in it."""
    from test_virtualenvs import offline, wheel

    from heronbridge.cli import build_parser
    from heronbridge.cli.topology import load_plan
    from heronbridge.runtime.scheduler import Home
    from heronbridge.runtime.scheduler.environments import TASK_PYTHON

    path = migrated(tmp_path)
    wheels = tmp_path / "wheels"
    wheel(wheels, "hbtabulate", "1.0")  # a dependency heronbridge's environment lacks
    (path / "virtualenvs" / "reliable.txt").write_text(offline(wheels, "hbtabulate==1.0"))
    checker = path / "src" / "bolts" / "checker.py"
    checker.write_text("import hbtabulate\n" + checker.read_text())
    home = tmp_path / "home"
    args = build_parser().parse_args(["run", "--project", str(path), "--home", str(home)])
    plan = load_plan(args, Home(home, args.state)).plan
    python = plan.config[TASK_PYTHON]
    assert Path(python).parent.parent.parent == home / "virtualenvs"
    assert plan.components["checker"].class_path == HOST_BOLT
