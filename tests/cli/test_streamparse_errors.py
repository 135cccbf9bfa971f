"""Bad input, tried as a new user would: each error is clear and names what is at fault,
and a crashing task never takes the others down."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from testkit import heronbridge, read_jsonl, wait_until

PROJECT = Path(__file__).resolve().parents[1] / "shims" / "project"


def run(home: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return heronbridge("run", *args, "--home", str(home), timeout=timeout)


def project_with(tmp_path: Path, topology: str, source: str) -> Path:
    copy = tmp_path / "project"
    shutil.copytree(PROJECT, copy)
    (copy / "topologies" / f"{topology}.py").write_text(source)
    return copy


def test_a_folder_without_config_json(tmp_path):
    result = run(tmp_path, "--project", str(tmp_path))
    assert result.returncode == 1
    assert "is not a streamparse project: expected a config.json there" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_project_folder_that_does_not_exist_is_named_as_missing(tmp_path):
    result = run(tmp_path, "--project", str(tmp_path / "wordcuont"))
    assert result.returncode == 1
    assert f"{str(tmp_path / 'wordcuont')!r}: no such folder; expected a streamparse project" \
        in result.stderr
    assert "config.json there" not in result.stderr and "Traceback" not in result.stderr


def test_a_mistyped_topology_name_lists_the_project_s_topologies_and_the_nearest(tmp_path):
    result = run(tmp_path, "--project", str(PROJECT), "-n", "groupngs")
    assert result.returncode == 1
    names = sorted(p.stem for p in (PROJECT / "topologies").glob("*.py"))
    assert "topology 'groupngs': expected a definition at " in result.stderr
    assert f"the project's topologies: {', '.join(names)} (did you mean 'groupings'?)" in \
        " ".join(result.stderr.split())


def test_a_topology_file_that_fails_to_import(tmp_path):
    project = project_with(tmp_path, "broken", "from parts.nothing import Nope\n")
    result = run(tmp_path, "--project", str(project), "-n", "broken")
    assert result.returncode == 1
    assert "topology 'broken'" in result.stderr and "failed to import" in result.stderr
    assert "No module named 'parts.nothing'" in result.stderr
    assert "add a line" not in result.stderr  # parts is the project's own, under src/


def test_a_package_nobody_installed_names_the_virtualenv_line_to_add(tmp_path):
    project = project_with(tmp_path, "cache", "from parts.spouts import NumberSpout\n"
                                              "import redis_not_installed_here.client\n")
    result = run(tmp_path, "--project", str(project), "-n", "cache")
    assert result.returncode == 1
    said = " ".join(result.stderr.split())
    assert "No module named 'redis_not_installed_here'" in said
    assert (f"the packages {project / 'virtualenvs' / 'cache.txt'} names: add a line for the "
            "package that provides 'redis_not_installed_here' there (e.g. "
            "`redis_not_installed_here`), then run again") in said


def test_an_error_inside_a_module_under_src_is_reported_where_it_is(tmp_path):
    project = project_with(tmp_path, "deep", "from parts.faulty import Bolt\n")
    (project / "src" / "parts" / "faulty.py").write_text("X = 1\nY = {}['missing']\n")
    result = run(tmp_path, "--project", str(project), "-n", "deep")
    assert result.returncode == 1
    assert "topology 'deep'" in result.stderr and "KeyError: 'missing'" in result.stderr
    assert f"(raised at {project / 'src' / 'parts' / 'faulty.py'}:2)" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_spec_naming_a_class_that_does_not_exist(tmp_path):
    project = project_with(tmp_path, "ghost", """
from parts.spouts import NumberSpout
from streamparse import ShellBolt, Topology


class Ghost(Topology):
    numbers = NumberSpout.spec()
    ghost = ShellBolt.spec(command="streamparse_run", script="parts.bolts.NoSuchBolt",
                           inputs=[numbers])
""")
    result = run(tmp_path, "--project", str(project), "-n", "ghost")
    assert result.returncode == 1
    assert "topology 'ghost', component 'ghost': its class 'parts.bolts.NoSuchBolt' cannot " \
           "be imported from src/" in result.stderr


def test_par_for_another_environment(tmp_path):
    project = project_with(tmp_path, "envs", """
from parts.bolts import PassBolt
from parts.spouts import NumberSpout
from streamparse import Topology


class Envs(Topology):
    numbers = NumberSpout.spec(par={"prod": 2})
    passing = PassBolt.spec(inputs=[numbers])
""")
    result = run(tmp_path, "--project", str(project), "-n", "envs")
    assert result.returncode == 1
    assert "component 'numbers': par is given per environment ['prod'], but not for the " \
           "environment in use ('test')" in result.stderr


@pytest.mark.integration
def test_an_unencodable_emit_names_the_task_and_the_others_run_on(tmp_path, run_project):
    project = project_with(tmp_path, "sets", """
from parts.bolts import PassBolt, ReprSink, SetEmitter
from parts.spouts import NumberSpout
from streamparse import Topology


class Sets(Topology):
    numbers = NumberSpout.spec()
    setter = SetEmitter.spec(inputs=[numbers])
    sink = ReprSink.spec(inputs=[setter])
    calm = PassBolt.spec(inputs=[numbers])
""")
    out = tmp_path / "out"
    with run_project(project, "sets", {"test.out": str(out), "test.count": 20}) as running:
        wait_until(lambda: sum(len(r) for k, r in read_jsonl(out).items()
                               if k.startswith("seen-calm")) == 20, 60, "calm to see all",
                   on_timeout=running.logs)
        log = next((running.workdir / "container-0" / "logs").glob("task-*-setter.log"))
        wait_until(lambda: "cannot encode" in log.read_text(), 20, "the error in the log")
    text = log.read_text()
    assert "topology 'sets', component 'setter', task" in text
    assert "emitted values the json serializer cannot encode" in text and "{2}" in text
    calm = [r for k, rows in read_jsonl(out).items() if k.startswith("seen-calm") for r in rows]
    assert len({r["pid"] for r in calm}) == 1  # the other bolt was never disturbed


@pytest.mark.parametrize(("option", "expected"), [
    ("topology.acker.executors=abc",
     "config 'topology.acker.executors' expects an integer >= 0, received 'abc'"),
    ("topology.workers=abc", "config 'topology.workers' expects an integer >= 1, received 'abc'"),
    ("topology.workers=0", "config 'topology.workers' expects an integer >= 1, received 0"),
])
def test_a_bad_storm_count_is_named_as_the_user_wrote_it(tmp_path, option, expected):
    result = run(tmp_path, "--project", str(PROJECT), "-n", "acking", "-o", option)
    assert result.returncode == 1
    assert f"topology 'acking': {expected}" in result.stderr
    assert "Traceback" not in result.stderr and "topology.stmgrs" not in result.stderr


@pytest.mark.parametrize(("text", "expected"), [
    ("{not json", "is not valid JSON"),
    ("[1, 2]", "expected a JSON object (streamparse's config.json), received list [1, 2]"),
    ('{"envs": {"prod": 3}}', "expected 'envs' to map environment names to objects, "
                              'received {"prod": 3}'),
])
def test_a_config_json_that_is_not_a_project_config(tmp_path, text, expected):
    project = tmp_path / "project"
    shutil.copytree(PROJECT, project)
    (project / "config.json").write_text(text)
    result = run(tmp_path, "--project", str(project), "-n", "acking")
    assert result.returncode == 1
    assert expected in result.stderr and "config.json" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_bad_per_component_config_is_refused_before_anything_starts(tmp_path):
    project = project_with(tmp_path, "badconf", """
from parts.bolts import PassBolt
from parts.spouts import NumberSpout
from streamparse import Topology


class BadConf(Topology):
    numbers = NumberSpout.spec(config={"topology.max.spout.pending": "lots"})
    passing = PassBolt.spec(inputs=[numbers])
""")
    result = run(tmp_path, "--project", str(project), "-n", "badconf")
    assert result.returncode == 1
    assert "topology 'badconf', component 'numbers': config 'topology.max.spout.pending' " \
           "expects" in result.stderr and "received 'lots'" in result.stderr
    assert not (tmp_path / "topologies" / "badconf").exists()  # refused before submit


def _set(path: str, value: object):
    def change(config: dict) -> None:
        *parents, last = path.split(".")
        node = config
        for key in parents:
            node = node.setdefault(key, {})
        node[last] = value
    return change


@pytest.mark.parametrize(("change", "expected"), [
    (_set("envs.test.options", "oops"),
     "environment 'test': expected 'options' to be an object of Storm options, received "
     '"oops"'),
    (_set("topology_specs", 5),
     "expected 'topology_specs' to be the folder of the topology definitions (a path, e.g. "
     '"topologies/"), received 5'),
    (_set("envs.test.log", "logs/"),
     "environment 'test': expected 'log' to be an object (path, file, max_bytes, "
     'backup_count, level), received "logs/"'),
    (_set("envs.test.log.path", 5),
     "environment 'test': expected 'log.path' to be a string (a folder or file name), "
     "received 5"),
    (_set("envs.test.log.level", "loud"),
     "environment 'test': expected 'log.level' to be one of ['critical', 'debug', 'error', "
     "'info', 'trace', 'warn', 'warning'], received \"loud\""),
    (_set("envs.test.log.max_bytes", "1MB"),
     "environment 'test': expected 'log.max_bytes' to be an integer >= 0, received \"1MB\""),
    (_set("envs.test.log.backup_count", -1),
     "environment 'test': expected 'log.backup_count' to be an integer >= 0, received -1"),
], ids=["options", "topology_specs", "log", "log.path", "log.level", "log.max_bytes",
        "log.backup_count"])
def test_a_bad_config_json_value_is_named_as_written_without_a_traceback(tmp_path, change,
                                                                         expected):
    project = tmp_path / "project"
    shutil.copytree(PROJECT, project)
    config = json.loads((project / "config.json").read_text())
    change(config)
    (project / "config.json").write_text(json.dumps(config))
    result = run(tmp_path, "--project", str(project), "-n", "acking")
    assert result.returncode == 1
    assert f"{str(project / 'config.json')!r}" in result.stderr and expected in result.stderr, \
        result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "topologies").exists()  # refused before anything started


def test_an_unknown_serializer_option_is_refused_for_a_streamparse_project(tmp_path):
    result = run(tmp_path, "--project", str(PROJECT), "-n", "acking",
                 "-o", "heronbridge.serializer=yaml")
    assert result.returncode == 1
    assert "topology 'acking': config 'heronbridge.serializer' expects 'json', the serializer" \
           in result.stderr and "received 'yaml'" in result.stderr, result.stderr


def test_a_syntax_error_in_src_names_its_own_file_and_line(tmp_path):
    project = project_with(tmp_path, "syntax", "from parts.broken import Bolt\n")
    (project / "src" / "parts" / "broken.py").write_text("X = 1\n\ndef broken(:\n    pass\n")
    result = run(tmp_path, "--project", str(project), "-n", "syntax")
    assert result.returncode == 1
    assert "SyntaxError" in result.stderr, result.stderr
    assert f"(in {project / 'src' / 'parts' / 'broken.py'}:3)" in result.stderr, result.stderr
    assert "raised at" not in result.stderr and "Traceback" not in result.stderr
