"""The lean in-process host (shims/storm/lean.py) on the in-memory topology: pystorm's
semantics with no processes, sockets or stream managers."""

from __future__ import annotations

import json
import logging
import os
import shutil
import sys
from collections import Counter
from pathlib import Path

import pytest

from heronbridge.compat.streamparse import load_project
from heronbridge.runtime.testing import InMemoryTopology

PROJECT = Path(__file__).parent / "project"


@pytest.fixture(autouse=True)
def task_process_state(tmp_path_factory):
    """What hosting components changes in a task's process (pystorm's log handlers, the
    runtime's own logger, the working folder, sys.path, the project's modules) is put back
    after each test: a later test in this process may load another project whose modules
    have the same names (`parts`)."""
    root, ours = logging.getLogger(), logging.getLogger("heronbridge")
    saved = (list(root.handlers), root.level, list(ours.handlers), ours.propagate, ours.level,
             os.getcwd(), list(sys.path))
    modules = set(sys.modules)
    yield
    root.handlers[:], root.level, ours.handlers[:], ours.propagate, ours.level = saved[:5]
    os.chdir(saved[5])
    sys.path[:] = saved[6]
    copies = str(tmp_path_factory.getbasetemp())
    for name in set(sys.modules) - modules:
        if (getattr(sys.modules[name], "__file__", None) or "").startswith(copies):
            del sys.modules[name]


def topology(tmp_path: Path, name: str, project_dir: Path = PROJECT,
             **options) -> tuple[InMemoryTopology, Path]:
    out = tmp_path / "out"
    resources = tmp_path / "resources"
    shutil.copytree(project_dir / "src", resources)
    opts = {"test.out": str(out), "topology.reliability.mode": "ATLEAST_ONCE", **options}
    project = load_project(project_dir, name, None, opts, False, resources)
    return InMemoryTopology(project.plan), out


def rows(out: Path, pattern: str) -> list[dict]:
    return [json.loads(line) for f in sorted(out.glob(pattern)) for line in f.open()]


def outcomes(out: Path) -> dict[int, list[str]]:
    result: dict[int, list[str]] = {}
    for r in rows(out, "spout-*.jsonl"):
        if r["event"] in ("ack", "fail"):
            result.setdefault(r["id"], []).append(r["event"])
    return result


def test_auto_anchor_and_ack_carry_fails_back_and_values_are_namedtuples(tmp_path):
    topo, out = topology(tmp_path, "acking", **{"test.count": 40})
    assert all(type(r.user).__name__ == "PystormComponent" and not r.user.owns_loop
               for r in topo.tasks.values())
    topo.run(60, batch=7)
    result = outcomes(out)
    assert result == {n: ["fail"] if n % 4 == 0 else ["ack"] for n in range(40)}
    seen = rows(out, "seen-passing-*.jsonl")
    assert sorted(r["n"] for r in seen) == list(range(40))
    assert {(r["component"], r["stream"], r["type"], tuple(r["fields"])) for r in seen} == \
        {("numbers", "default", "NumbersDefaultTuple", ("n",))}


def test_pystorm_report_metric_counts_in_the_tasks_metrics(tmp_path):
    topo, _ = topology(tmp_path, "acking", **{"test.count": 30})
    topo.run(40, batch=7)
    passing = [t for t in topo.tasks.values() if t.component == "passing"]
    assert sum(t.context.metrics.counters.get("user/passed", 0) for t in passing) == 30
    counters: dict[str, float] = {}
    passing[0].context.metrics.export(counters, {})
    assert "user/passed" in counters  # published with the task's own metrics


def test_reliable_spout_replays_and_need_task_ids(tmp_path):
    topo, out = topology(tmp_path, "replays", **{"test.count": 20, "test.reject": 5})
    topo.run(200, batch=5)
    attempts = Counter(r["n"] for r in rows(out, "seen-judge-*.jsonl"))
    assert attempts == {n: 3 if n % 5 == 0 else 1 for n in range(20)}  # 1 + max_fails

    topo, out = topology(tmp_path / "ids", "taskids", **{"test.count": 12})
    topo.run(20)
    sinks = {r["n"]: r["pid"] for r in rows(out, "seen-sink-*.jsonl")}
    sink_tasks = {t for t, r in topo.tasks.items() if r.component == "sink"}
    probes = rows(out, "seen-probe-*.jsonl")
    assert len(probes) == 12 and len(sinks) == 12
    assert all(len(p["tasks"]) == 1 and p["tasks"][0] in sink_tasks for p in probes)


def test_a_raising_bolt_fails_its_tuple_and_exits_through_the_task(tmp_path):
    topo, out = topology(tmp_path, "crashing", **{"test.count": 5})
    with pytest.raises(SystemExit) as exit_:
        topo.run(5)
    assert exit_.value.code == 1
    assert [r["n"] for r in rows(out, "seen-hard-*.jsonl") if "n" in r] == [0, 1, 2, 3]
    hard = next(r for r in topo.tasks.values() if r.component == "hard")
    assert hard.emitter.failed == 1 and hard.emitter.errors_reported == 1


def test_acking_a_tuple_twice_is_the_components_error(tmp_path):
    topo, _ = topology(tmp_path, "acking", **{"test.count": 2})  # the judge acks n=1
    judge = next(r for r in topo.tasks.values() if r.component == "judge")
    comp = judge.user.execute.__self__.comp
    first = comp.ack

    def ack_twice(tup):
        first(tup)
        first(tup)

    comp.ack = ack_twice
    comp.exit_on_exception = False
    topo.run(2)
    assert judge.emitter.errors_reported == 1
    [record] = judge.emitter.exceptions.records.values()
    assert "ShimError" in str(record) and "already acked or failed" in str(record)


def test_a_class_whose_module_uses_threads_keeps_pystorms_loop(tmp_path, monkeypatch):
    """pystorm lets any thread emit, ack or fail under its writer lock; the lean host's
    calls are the task loop's, so such a class stays on the pulled host."""
    from heronbridge.shims.storm.lean import lean_capable

    (tmp_path / "threaded_bolt.py").write_text(
        "from concurrent.futures import ThreadPoolExecutor\n"
        "from streamparse import Bolt\n\n"
        "class Writer(Bolt):\n"
        "    def initialize(self, conf, ctx):\n"
        "        self.pool = ThreadPoolExecutor(2)\n\n"
        "    def process(self, tup):\n"
        "        self.pool.submit(self.ack, tup)\n")
    (tmp_path / "plain_bolt.py").write_text(
        "from streamparse import Bolt\n\n"
        "class Plain(Bolt):\n"
        "    def process(self, tup):\n"
        "        self.emit([tup.values[0]])\n\n"
        "class Derived(Plain):\n"
        "    pass\n")
    (tmp_path / "derived_bolt.py").write_text(
        "from threaded_bolt import Writer\n\n"
        "class Later(Writer):\n"
        "    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import derived_bolt
    import plain_bolt
    import threaded_bolt

    assert not lean_capable(threaded_bolt.Writer)
    assert not lean_capable(derived_bolt.Later)  # a base class's module counts too
    assert lean_capable(plain_bolt.Plain) and lean_capable(plain_bolt.Derived)


@pytest.mark.compat("api/bytes values (as UTF-8 text)")
@pytest.mark.parametrize("serializer", ["json", "msgpack"])
def test_bytes_a_spout_or_a_bolt_emits_arrive_as_the_text_they_hold(tmp_path, serializer):
    """As Storm's multilang carries them (pystorm's encoder writes bytes as their UTF-8
    text), whichever serializer the project's config.json names."""
    project = tmp_path / "project"
    shutil.copytree(PROJECT, project, ignore=shutil.ignore_patterns("__pycache__"))
    config = json.loads((project / "config.json").read_text())
    config["serializer"] = serializer
    (project / "config.json").write_text(json.dumps(config))
    for name, expected in (("bytes_values", ["'dog-1'", "['nested', 1]"]),
                           ("shapes", ["[1, 2]", "{1: 'x', 'k': [1, [2, 3]]}"
                                       if serializer == "msgpack" else
                                       "{'1': 'x', 'k': [1, [2, 3]]}", "'n=1'", "'n=1'"])):
        topo, out = topology(tmp_path / name, name, project, **{"test.count": 3})
        topo.run(5)
        got = [r["values"] for r in rows(out, "seen-sink-*.jsonl")]
        assert len(got) == 3 and expected in got, got
        topo.close()
