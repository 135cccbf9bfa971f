"""The codemod's output runs: every example project (and rule case that is a whole project)
migrated, each of its topologies loads on the runtime as heronpy with the original's
components, or refuses to run with the text of a TODO marker the copy holds; and the
attributes example, migrated, reads in every place the values the original read
(`conform --migrated` checks the examples' runs against Storm:
tests/conformance/test_examples_conform.py)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from cases import CASES as ALL_CASES
from test_rules import materialise
from testkit import Running, read_jsonl, wait_until

from heronbridge.compat import streamparse
from heronbridge.compat.projects import load_project
from heronbridge.migrate.runner import migrate
from heronbridge.runtime.telemetry import ACK_COUNT, ERROR_COUNT
from heronbridge.shims.heronpy.migrated import Unported

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "storm_topologies"
PROJECTS = sorted(p.parent for p in EXAMPLES.glob("*/config.json"))
CASES = {c.name: c for c in ALL_CASES if "config.json" in {**c.before, **c.extra}}
TOPOLOGIES = [(p.name, t.stem) for p in PROJECTS for t in sorted(p.glob("topologies/*.py"))] \
    + [(name, Path(rel).stem) for name, c in CASES.items() for rel in sorted(c.before)
       if rel.startswith("topologies/")]
MARKER = re.compile(r"TODO\(heronbridge:HB\d{3}\): [^;]+")
COPIES: dict[str, Path] = {}  # project -> its migrated copy, made once per session


def original(project: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An example project, or a rule case that is a whole project, written out."""
    if project not in CASES:
        return EXAMPLES / project
    root = tmp_path_factory.getbasetemp() / "cases" / project
    if not root.exists():
        case = CASES[project]
        materialise(root, {**case.before, **case.extra})
    return root


def migrated(project: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    if project not in COPIES:
        copy = tmp_path_factory.mktemp("migrated") / project
        shutil.copytree(original(project, tmp_path_factory), copy,
                        ignore=shutil.ignore_patterns("__pycache__", ".ruff_cache"))
        outcome = migrate(copy, jobs=1)
        assert outcome.changed and not outcome.failed, outcome.failed
        COPIES[project] = copy
    return COPIES[project]


def markers_in(root: Path) -> str:
    return "\n".join(p.read_text() for p in root.rglob("*.py"))


def copy_group(project: str):
    """A project's tests on one xdist worker (--dist loadgroup): its copy is migrated once."""
    return pytest.mark.xdist_group(f"migrated-{project}")


@pytest.mark.parametrize(("project", "topology"), [
    pytest.param(p, t, id=f"{p}-{t}", marks=copy_group(p)) for p, t in TOPOLOGIES])
def test_each_migrated_topology_loads_or_refuses_with_its_marker(project, topology,
                                                                 tmp_path_factory, tmp_path):
    before = streamparse.load_project(original(project, tmp_path_factory), topology,
                                      resources=tmp_path / "original")
    copy = migrated(project, tmp_path_factory)
    try:
        heron = load_project(copy, topology, resources=tmp_path / "migrated")
    except Unported as refused:
        # It refuses with a marker's text, and that marker is in the copy.
        said = MARKER.search(str(refused))
        assert said, refused
        assert said.group(0) in markers_in(copy), refused
        assert f"topology {topology!r}" in str(refused)
        return
    assert heron.plan.config.get("heronbridge.heronpy.inputs") is not None  # heronpy's
    assert set(heron.plan.components) == set(before.plan.components)
    for name, spec in before.plan.components.items():
        assert heron.plan.components[name].parallelism == spec.parallelism, name


@pytest.mark.compat("api/spouts", "api/bolts", "heronpy/Spout and Bolt",
                    "heronpy/TopologyBuilder and Topology", on="heronpy")
@copy_group("attributes")
@pytest.mark.integration
def test_the_migrated_attributes_example_reads_what_the_original_reads(home, state,
                                                                      tmp_path_factory,
                                                                      tmp_path):
    """pid, task_id, component_name, topology_name, debug, storm_conf, context and logger,
    read in initialize, in next_tuple/process and in a helper: the same values."""
    count = 12
    runs = {"original": EXAMPLES / "attributes",
            "migrated": migrated("attributes", tmp_path_factory)}
    seen = {}
    for name, path in runs.items():
        out = tmp_path / name
        project = load_project(path, "attributes",
                               options={"attributes.count": count,
                                        "example.output.dir": str(out)},
                               resources=home.workdir("attributes") / "resources")
        def settled(out: Path = out) -> dict | None:
            echoed = sum(len(rows) for rows in read_jsonl(out).values())
            totals = running.metrics()
            acked = totals.get("numbers", {}).get(ACK_COUNT)
            return totals if echoed == count and acked == count else None

        with Running(project.plan, home, state, project) as running:
            totals = wait_until(settled, 60, f"{name}: every number echoed and acked",
                                on_timeout=running.logs)
            assert not any(c.get(ERROR_COUNT) for c in totals.values()), running.logs()
        seen[name] = {f: sorted((r["n"], repr(r["seen"])) for r in rows)
                      for f, rows in read_jsonl(out).items()}
    assert seen["migrated"] == seen["original"]
    first = read_jsonl(tmp_path / "original")
    record = next(iter(first.values()))[0]["seen"]
    # What pystorm gave, read in the bolt: its task, its name, the topology's, no debug,
    # its own pid, Storm's conf and context, a Logger.
    task = record["process"][0]
    assert record["process"][1:] == ["echo", "attributes", False, True, "attributes",
                                     "echo", True]
    assert record["helper"] == [task, "echo", "attributes", False, True, count, task,
                                ["numbers"]]
    assert record["initialize"] == record["process"]
    assert record["upstream"]["helper"][1:3] == ["numbers", "attributes"]
