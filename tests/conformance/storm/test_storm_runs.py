"""Streamparse projects on real Storm (local mode) under the tracing proxy: a run ends
when its traces say so, a broken project ends at once with an explanation, and nothing
Storm started outlives the run."""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest
from testkit import storm_leftovers

from heronbridge.compat.streamparse import load_project
from heronbridge.conformance.scenario import Scenario
from heronbridge.conformance.storm import run_on_storm, traps
from heronbridge.conformance.trace import schema, tracefile

pytestmark = [pytest.mark.integration, pytest.mark.conformance]

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "storm_topologies"
WORD = re.compile(r"[a-z]+")


def storm_run(project_dir: Path, run_dir: Path, install, **kw):
    scenario = Scenario(name=project_dir.name, project=project_dir,
                        **{"quiet": 3.0, "timeout": 150.0, **kw})
    project = load_project(project_dir, None, None, scenario.storm_options())
    return scenario, run_on_storm(project, scenario, run_dir, install=install)


def traces(run_dir: Path) -> list[dict]:
    return [r for path in tracefile.files(run_dir / "storm" / "traces")
            for r in tracefile.read(path)]


def component_pids(records: list[dict]) -> set[int]:
    return {r["pid"] for r in records if r["ev"] == schema.START}


def test_wordcount_is_traced_on_every_component_and_ends_by_its_traces(
        tmp_path, storm_install):
    scenario, run = storm_run(EXAMPLES / "wordcount", tmp_path, storm_install,
                              options={"wordcount.rounds": 1})
    assert run.finished, run.explanation
    assert run.snapshot.done(scenario.quiet)
    assert run.explanation == "" and run.trap is None
    records = traces(tmp_path)
    by = Counter((r["component"], r["ev"]) for r in records)
    started = {(r["component"], r["task"]) for r in records if r["ev"] == schema.START}
    tasks = next(r["tasks"] for r in records if r["ev"] == schema.START)
    assert started == {(c, t) for c in ("word_spout", "count_bolt") for t in tasks[c]}
    assert len(tasks["count_bolt"]) == 2

    words = [w for line in (EXAMPLES / "wordcount/src/data/words.txt").read_text().splitlines()
             for w in WORD.findall(line.lower())]
    assert by[("word_spout", schema.EMIT)] == len(words)
    assert by[("word_spout", schema.SPOUT_ACK)] == len(words)  # every tuple tree completed
    assert by[("count_bolt", schema.RECV)] == len(words)
    assert by[("count_bolt", schema.EMIT)] == len(words)
    assert by[("count_bolt", schema.ACK)] == len(words)
    # fields grouping: each word on one count task only
    task_of: dict[str, set[int]] = {}
    for r in records:
        if r["ev"] == schema.RECV:
            task_of.setdefault(json.loads(r["values"])[0], set()).add(r["task"])
    assert all(len(t) == 1 for t in task_of.values())

    assert run.started < run.ended
    assert run.java_log.is_file() and run.flux.is_file()
    assert not (tmp_path / "storm" / "tmp").exists()
    assert storm_leftovers(tmp_path, component_pids(records)) == []


@pytest.mark.compat("grouping/direct", "api/direct emits", on="storm")
def test_direct_grouping_runs_on_storm(tmp_path, storm_install):
    scenario, run = storm_run(EXAMPLES / "direct", tmp_path, storm_install,
                              options={"direct.count": 30})
    assert run.finished, run.explanation
    records = traces(tmp_path)
    tasks = next(r["tasks"] for r in records if r["ev"] == schema.START)
    sinks = sorted(tasks["sink"])
    received = {json.loads(r["values"])[0]: r["task"] for r in records
                if r["ev"] == schema.RECV and r["component"] == "sink"}
    assert received == {n: sinks[n % len(sinks)] for n in range(30)}
    direct = [r for r in records if r["ev"] == schema.EMIT and r["stream"] == "routed"]
    assert len(direct) == 30 and all(r["direct"] in sinks for r in direct)
    assert storm_leftovers(tmp_path, component_pids(records)) == []


@pytest.mark.compat("multilang/metrics (from a component)", on="storm",
                    partly="only metrics the Java ShellBolt registered; a streamparse bolt's "
                           "own metric ends the topology")
def test_a_bolt_reporting_an_unregistered_metric_ends_the_run_at_once(
        tmp_path, storm_install):
    project = tmp_path / "project"
    shutil.copytree(EXAMPLES / "wordcount", project,
                    ignore=shutil.ignore_patterns("__pycache__"))
    (project / "src" / "bolts" / "wordcount.py").write_text(
        "from streamparse import Bolt\n\n\n"
        "class WordCountBolt(Bolt):\n"
        "    outputs = ['word', 'count']\n\n"
        "    def process(self, tup):\n"
        "        self.report_metric('words_seen', 1)\n"
        "        self.emit([tup.values[0], 1])\n")
    _, run = storm_run(project, tmp_path / "run", storm_install, timeout=150.0)
    assert not run.finished
    assert run.ended - run.started < 60  # not the scenario's timeout
    assert run.trap is not None and run.trap.kind == traps.UNREGISTERED_METRIC
    assert run.trap.component == "count_bolt"
    assert run.trap.task in next(r["tasks"]["count_bolt"] for r in traces(tmp_path / "run")
                                 if r["ev"] == schema.START)
    assert "topology 'wordcount' on Storm: component 'count_bolt'" in run.explanation
    assert "'words_seen'" in run.explanation
    assert storm_leftovers(tmp_path / "run", component_pids(traces(tmp_path / "run"))) == []


def test_an_interrupted_run_leaves_nothing_behind(tmp_path, storm_install):
    scenario = Scenario(name="wordcount", project=EXAMPLES / "wordcount", quiet=30,
                        timeout=150, options={"wordcount.rounds": 1000})
    project = load_project(scenario.project, None, None, scenario.storm_options())
    seen = []

    def interrupt(snapshot):
        # Once all three task processes have written their start (each writes its records
        # every 0.2 s) and the counter has received tuples.
        seen.append(snapshot)
        started = sum(evs.get(schema.START, 0) for evs in snapshot.per_component.values())
        if started >= 3 and snapshot.per_component.get("count_bolt", {}).get(schema.RECV, 0):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_on_storm(project, scenario, tmp_path, install=storm_install, on_progress=interrupt)
    records = traces(tmp_path)
    assert len(component_pids(records)) == 3  # the components were running
    assert storm_leftovers(tmp_path, component_pids(records)) == []
