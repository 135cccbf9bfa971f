"""Class hierarchies migrated and run: each topology of tests/migrate/projects runs before
and after `heronbridge migrate`, on the in-memory topology, and every component must
receive the same tuples (with the values its upstream computed from what pystorm gave
it) and every spout hear the same acks and fails. Issue 27's RecordingBolt/FlakyBolt
project also runs as the issue ran it, its tasks as processes."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from testkit import Running, wait_until

import heronbridge.compat.heronpy  # noqa: F401 - heronpy imports under our protobuf
from heronbridge.compat.projects import load_project
from heronbridge.conformance.in_memory import differences, record_apart
from heronbridge.migrate.runner import migrate

PROJECTS = Path(__file__).parent / "projects"
EXTLIB = PROJECTS / "extlib"  # a library the codemod does not see
TOPOLOGIES = [("hierarchies", "base"), ("hierarchies", "mixins"), ("hierarchies", "unseen"),
              ("probes", "probes")]
COPIES: dict[str, Path] = {}


def migrated(project: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    if project not in COPIES:
        copy = tmp_path_factory.mktemp("migrated") / project
        shutil.copytree(PROJECTS / project, copy,
                        ignore=shutil.ignore_patterns("__pycache__"))
        outcome = migrate(copy, jobs=1)
        assert outcome.changed and not outcome.failed, [f.error for f in outcome.failed]
        COPIES[project] = copy
    return COPIES[project]


def run(root: Path, topology: str, workdir: Path, **options) -> dict:
    result = record_apart(root, topology, workdir, calls=40, options=options,
                          env={"PYTHONPATH": str(EXTLIB)})
    assert "error" not in result, f"{root.name}/{topology}: {result['error']}"
    return result


@pytest.mark.parametrize(("project", "topology"), TOPOLOGIES,
                         ids=[f"{p}-{t}" for p, t in TOPOLOGIES])
def test_the_migrated_topology_receives_and_settles_what_the_original_did(
        project, topology, tmp_path_factory, tmp_path):
    before = run(PROJECTS / project, topology, tmp_path / "before")
    after = run(migrated(project, tmp_path_factory), topology, tmp_path / "after")
    assert before["tuples"] > 0
    assert differences(before, after) == []
    spout = "numbers"
    assert before["settled"][spout]["acked"] == (30 if project == "probes" else 12)


def test_what_the_components_computed_from_pystorms_attributes_reached_the_sink(
        tmp_path_factory, tmp_path):
    """Not just the same: the values each shape computed from task_id, component_name,
    topology_name, context and conf are there, one per number."""
    after = run(migrated("hierarchies", tmp_path_factory), "base", tmp_path)
    sink = {(source, json.loads(values)[0], json.dumps(json.loads(values)[1]))
            for source, _, values, _ in after["received"]["sink"]}
    factors = {"tagging": 1, "doubling": 2, "tripling": 3, "quadrupling": 4, "keyword": 5,
               "inherited": 7, "logged": 1}
    for source, factor in factors.items():
        got = sorted(n for s, n, _ in sink if s == source)
        assert got == [n * factor for n in range(12)], source
        tags = {json.loads(t)[0] for s, _, t in sink if s == source}
        assert tags == {f"{source}@{source}/base"}, source
        indexes = {tuple(json.loads(t)[1:]) for s, _, t in sink if s == source}
        assert {i for i, _ in indexes} <= {0, 1} and {t for _, t in indexes} == {30}, source
    early = {tuple(json.loads(t)[1]) for s, _, t in sink if s == "early"}
    assert len(early) == 1 and len(next(iter(early))) == 2
    assert len(set(next(iter(early)))) == 1  # self.task_id == ctx["taskid"]


def test_the_issue_project_passes_its_checks_before_and_after(tmp_path_factory, tmp_path):
    """Issue 27's project, on the in-memory topology: every number acked, each multiple
    of three failed once and sent again, each FlakyBolt task knows its peers, and the
    recording bolts received each number once."""
    for name, root in (("before", PROJECTS / "probes"),
                       ("after", migrated("probes", tmp_path_factory))):
        out = tmp_path / name / "probes"
        out.mkdir(parents=True)
        run(root, "probes", tmp_path / name, **{"probes.out": str(out)})
        check_probes(out, name)


def check_probes(out: Path, name: str, count: int = 30) -> None:
    rows = [json.loads(line) for f in sorted(out.glob("*.jsonl")) for line in f.open()]
    spout = [r for r in rows if r["kind"] == "spout"]
    assert sorted(r["n"] for r in spout if r["event"] == "ack") == list(range(count)), name
    assert sorted(r["n"] for r in spout if r["event"] == "fail") == \
        [n for n in range(count) if n % 3 == 0], name
    starts = [r for r in rows if r["event"] == "start"]
    by_component: dict[str, list[dict]] = {}
    for r in starts:
        by_component.setdefault(r["component"], []).append(r)
    assert sorted(by_component) == ["flaky", "recording"], name
    for started in by_component.values():
        tasks = sorted(r["me"] for r in started)
        assert len(tasks) == 2 and all(r["tasks"] == tasks for r in started), (name, started)
    received = [r["n"] for r in rows if r["component"] == "recording" and
                r["event"] == "recv"]
    assert sorted(received) == list(range(count)), name


@pytest.mark.integration
def test_the_migrated_issue_project_starts_and_passes_its_checks_as_processes(
        home, state, tmp_path_factory, tmp_path):
    """As the issue ran it: every task a process; before the fix each FlakyBolt task
    died in initialize and the topology never started."""
    out = tmp_path / "probes"
    out.mkdir()
    project = load_project(migrated("probes", tmp_path_factory), "probes",
                           options={"probes.out": str(out)},
                           resources=home.workdir("probes") / "resources")

    def acked() -> bool:
        rows = [json.loads(line) for f in out.glob("numbers-*.jsonl") for line in f.open()]
        return sum(r["event"] == "ack" for r in rows) == 30

    with Running(project.plan, home, state, project) as running:
        wait_until(acked, 60, "every number acked", on_timeout=running.logs)
    check_probes(out, "as processes")


def test_pystorms_attributes_are_set_once_by_each_class(tmp_path_factory):
    """Each component class of the migrated hierarchies, initialized as heronpy does:
    the attributes are set by one initialize, whatever the chain of super() calls."""
    root = migrated("hierarchies", tmp_path_factory)
    saved = list(sys.path)
    sys.path[:0] = [str(root / "src"), str(EXTLIB)]
    forget_packages()  # another test's project may have left a `bolts` package loaded
    try:
        from bolts import derived, mixed, reported  # noqa: PLC0415 - the migrated copy's
        from bolts.base import Tagging  # noqa: PLC0415

        classes = [Tagging, derived.Doubling, derived.Tripling, derived.Quadrupling,
                   derived.Keyword, derived.Early, derived.Inherited, derived.Logged,
                   derived.Plain, mixed.Described, mixed.CountedTagging, reported.Reported]
        for cls in classes:
            sets: list[str] = []

            def counted(self, name, value, sets=sets, cls=cls):
                sets.append(name)
                cls.__setattr__(self, name, value)

            # A subclass adding nothing but the count: heronpy calls the same initialize.
            probe = type(cls.__name__, (cls,), {"__setattr__": counted})
            component = probe(SimpleNamespace(logger=None))
            component.initialize(config={"topology.message.timeout.secs": 30},
                                 context=Context(cls.__name__.lower()))
            assert sets.count("task_id") == 1, (cls.__name__, sets)
            assert sets.count("context") == 1, (cls.__name__, sets)
            assert component.task_id == 5 and component.context["taskid"] == 5
    finally:
        sys.path[:] = saved
        forget_packages()


def forget_packages() -> None:
    for name in [m for m in sys.modules if m.split(".")[0] in ("bolts", "reporting")]:
        del sys.modules[name]


class Context:
    """heronpy's TopologyContext, as far as the preludes read it."""

    def __init__(self, component: str) -> None:
        self.component = component

    def get_topology_name(self) -> str:
        return "t"

    def get_task_id(self) -> int:
        return 5

    def get_component_id(self) -> str:
        return self.component

    def get_cluster_config(self) -> dict:
        return {}
