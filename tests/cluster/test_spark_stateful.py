"""Effectively once on the Spark standalone cluster: the streamparse stateful word count
(StatefulMixin) and heronpy's stateful word count (StatefulComponent), each submitted in
two containers on the two workers with its checkpoints every second, one counting task
SIGKILLed once a checkpoint is consistent. Judged by output: every word's final count
exact, the killed task back with the checkpoint's counts and the spout rewound to the
checkpoint's offset, not to the start."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest
from testkit import HERONBRIDGE, read_jsonl, wait_until

from heronbridge.compat.heronpy.loader import heron_options, load_file
from heronbridge.runtime.plan.tasks import TaskLayout
from heronbridge.runtime.scheduler import Home
from heronbridge.runtime.statemgr import STATEFUL_CHECKPOINTS

pytestmark = [pytest.mark.cluster, pytest.mark.integration]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
PROJECT = EXAMPLES / "storm_topologies" / "stateful_wordcount"
HERONPY = EXAMPLES / "heronpy" / "stateful_wordcount.py"
WORD = re.compile(r"[a-z]+")
# Bounded input, slow enough that a checkpoint completes (each second) well before the
# spout reaches its end on a loaded machine: the kill must land mid-stream.
ROUNDS, LINES_PER_SEC = 10, 200  # streamparse: 10 x 200 lines, 10 s of input
HP_LINES, HP_RATE = 3000, 300  # heronpy: 10 s of input
STATEFUL = {"topology.stateful.checkpoint.interval.secs": 1,
            "heronbridge.restart.backoff.secs": 0.2}


def cli(cwd: Path, *args: object, timeout: float = 300) -> str:
    done = subprocess.run([HERONBRIDGE, *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd, check=False,
                          env={**os.environ, "HERONBRIDGE_STATE": ""})
    assert done.returncode == 0, f"heronbridge {args}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def options(pairs: dict) -> list[str]:
    return [a for k, v in pairs.items() for a in ("-o", f"{k}={v}")]


def container_logs(spark, home: Home, name: str) -> str:
    scheduler = home.workdir(name) / "scheduler.log"
    return (spark.logs(f"work-*/**/heronbridge/{name}/container-*/**/*.log", tail=200_000)
            + f"\n--- {scheduler}\n"
            + (scheduler.read_text(errors="replace")[-5000:] if scheduler.is_file() else ""))


class Submitted:
    """A topology submitted to the cluster with its state on ZooKeeper, killed on exit."""

    def __init__(self, spark, zookeeper, tmp_path: Path, name: str, *submit: object) -> None:
        self.spark, self.cwd, self.name = spark, tmp_path, name
        self.uri = zookeeper.uri(f"stateful-{name}")
        self.home = Home(tmp_path / "home", self.uri)
        self.submit = [*submit, "--containers", 2, "--scheduler", "spark",
                       "--spark-master", spark.master, "--state", self.uri,
                       "--home", self.home.root,
                       *options({**STATEFUL,
                                 "heronbridge.checkpoint.root": tmp_path / "checkpoints"})]

    def __enter__(self) -> Submitted:
        began = time.monotonic()
        cli(self.cwd, "submit", *self.submit)
        self.submitted = time.monotonic()
        self.took = {"submit": self.submitted - began}
        self.state = self.home.open_statemgr()
        return self

    def __exit__(self, *exc: object) -> None:
        began = time.monotonic()
        try:
            cli(self.cwd, "kill", self.name, "--state", self.uri, "--home", self.home.root)
        finally:
            self.state.close()
        self.took["heronbridge kill"] = time.monotonic() - began

    def mark(self, what: str) -> None:
        """Seconds from the submit's end to `what`, for the summary line."""
        self.took[what] = time.monotonic() - self.submitted

    def times(self) -> str:
        return ", ".join(f"{k} {v:.1f}s" for k, v in self.took.items())

    def checkpoints(self) -> list[str]:
        """The consistent checkpoints, newest first."""
        found = self.state.get(STATEFUL_CHECKPOINTS, self.name)
        return list(found.checkpoint_ids) if found is not None else []

    def logs(self) -> str:
        return container_logs(self.spark, self.home, self.name)


def rollbacks(logs: str, name: str) -> int:
    return logs.count(f"topology {name!r}: rolling back to")


# -- streamparse: StatefulMixin --------------------------------------------------------


def project_words(rounds: int) -> Counter:
    lines = (PROJECT / "src" / "data" / "lines.txt").read_text().splitlines()
    once = Counter(w for line in lines for w in WORD.findall(line.lower()))
    return Counter({w: c * rounds for w, c in once.items()})


def final_counts(out: Path) -> dict[str, int]:
    """Each word's last count in its counting task's file (a word goes to one task by the
    fields grouping; a task started again appends to its file): the counts it ended with."""
    final: dict[str, int] = {}
    for rows in read_jsonl(out, "count-*.jsonl").values():
        for r in rows:
            if "word" in r:
                final[r["word"]] = r["count"]
    return final


def starts(out: Path, component: str) -> dict[str, list[dict]]:
    return {name: [r for r in rows if r.get("event") == "start"]
            for name, rows in read_jsonl(out, f"{component}-*.jsonl").items()}


@pytest.mark.compat("api/stateful bolts", on="spark")
def test_the_stateful_project_counts_exactly_after_a_counting_task_is_killed(
        spark, zookeeper, tmp_path, capsys):
    name, out = "stateful_wordcount", tmp_path / "out"
    want = dict(project_words(ROUNDS))
    with Submitted(spark, zookeeper, tmp_path, name, "--project", PROJECT, "-e", "prod",
                   *options({"example.output.dir": out, "stateful_wordcount.rounds": ROUNDS,
                             "stateful_wordcount.lines_per_sec": LINES_PER_SEC})) as running:
        first = wait_until(running.checkpoints, 90, "a consistent checkpoint",
                           on_timeout=running.logs)
        running.mark("checkpoint")
        wait_until(lambda: len(starts(out, "count")) == 2, 30, "both counting tasks",
                   on_timeout=running.logs)
        victim_file = min(starts(out, "count"))
        victim = starts(out, "count")[victim_file][-1]["pid"]
        assert final_counts(out) != want, "the input ended before a checkpoint completed"
        os.kill(victim, signal.SIGKILL)  # every worker is this machine (127.0.0.x)
        running.mark("SIGKILL")
        wait_until(lambda: final_counts(out) == want, 120, "every word counted exactly",
                   interval=0.5, on_timeout=lambda: f"{counted_off(final_counts(out), want)}"
                                                    f"\n{running.logs()[-20000:]}")
        running.mark("exact")
        wait_until(lambda: running.checkpoints()[0] > first[0], 30,
                   "a checkpoint after the rollback", on_timeout=running.logs)
        running.mark("checkpoint again")
        final = final_counts(out)
        logs = running.logs()
    assert final == want, counted_off(final, want)  # nothing counted twice since
    done = rollbacks(logs, name)
    assert done >= 2, logs[-20000:]  # at the start, and after the kill
    # The spout went back to the checkpoint's offset (a topology that lost its state would
    # count exactly too, by reading from line 0 again); the killed counter came back in a
    # new process with the checkpoint's counts.
    [spout] = starts(out, "lines").values()
    offsets = [r["offset"] for r in spout]
    assert offsets[0] == 0 and max(offsets[1:]) > 0, offsets
    again = starts(out, "count")[victim_file][-1]
    assert again["pid"] != victim and again["restored"] > 0, again
    with capsys.disabled():
        print(f"\nstateful streamparse project on Spark: {done} rollbacks; the spout "
              f"started from offsets {offsets}; the killed counter restored "
              f"{again['restored']} counts; {running.times()}")


def counted_off(got: dict[str, int], want: dict[str, int]) -> str:
    off = {w: (got.get(w), n) for w, n in want.items() if got.get(w) != n}
    extra = sorted(set(got) - set(want))
    return (f"{len(off)} of {len(want)} words off (word: (received, expected)): "
            f"{dict(list(off.items())[:15])}; words never sent: {extra[:15]}")


# -- heronpy: StatefulComponent ----------------------------------------------------------


def heronpy_reports(out: Path) -> dict[int, dict]:
    """{count task: its last report}: each count task rewrites its file every second."""
    return {r["task"]: r for r in (json.loads(p.read_text()) for p in
                                   out.glob("counts-*.json"))}


def heronpy_counts(out: Path) -> Counter:
    counts: Counter = Counter()
    for report in heronpy_reports(out).values():
        counts.update(report["counts"])
    return counts


@pytest.mark.compat("heronpy/stateful components", on="spark")
def test_the_heronpy_stateful_topology_counts_exactly_after_a_counting_task_is_killed(
        spark, zookeeper, tmp_path, capsys):
    script = tmp_path / "script"  # shipped to the workers, and paths in it relocated there
    script.mkdir()
    shutil.copy(HERONPY, script / "stateful_wordcount.py")
    with heron_options(str(tmp_path)):  # the module defines a Topology: heronpy needs it
        spec = importlib.util.spec_from_file_location("hp_stateful_wordcount", HERONPY)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    expected = module.expected_counts(HP_LINES)
    out = tmp_path / "out"
    out.mkdir()
    given = {"wordcount.out": out, "wordcount.lines": HP_LINES, "wordcount.rate": HP_RATE}
    plan = load_file(script / "stateful_wordcount.py", options=given)
    tasks = TaskLayout.of(plan).component_tasks["count"]
    victim = tasks[0]
    with Submitted(spark, zookeeper, tmp_path, plan.name,
                   script / "stateful_wordcount.py", *options(given)) as running:
        first = wait_until(lambda: heronpy_reports(out).get(victim), 90,
                           "the counting task's counts", on_timeout=running.logs)
        wait_until(running.checkpoints, 60, "a consistent checkpoint",
                   on_timeout=running.logs)
        running.mark("checkpoint")
        assert sum(heronpy_counts(out).values()) < sum(expected.values()), \
            "the input ended before a checkpoint completed"
        os.kill(first["pid"], signal.SIGKILL)  # every worker is this machine (127.0.0.x)
        running.mark("SIGKILL")
        wait_until(lambda: heronpy_reports(out)[victim]["pid"] != first["pid"], 60,
                   "the counting task to come back", on_timeout=running.logs)
        wait_until(lambda: heronpy_counts(out) == expected, 120, "every word counted exactly",
                   interval=0.5,
                   on_timeout=lambda: f"{counted_off(heronpy_counts(out), expected)}"
                                      f"\n{running.logs()[-20000:]}")
        running.mark("exact")
        # Each count task writes its counts every second: two more rounds, still exact.
        for _ in range(2):
            stamps = {p: p.stat().st_mtime_ns for p in out.glob("counts-*.json")}
            wait_until(lambda stamps=stamps: all(p.stat().st_mtime_ns > t
                                                 for p, t in stamps.items()), 15,
                       "the counts written again", on_timeout=running.logs)
        running.mark("written twice more")
        final = heronpy_counts(out)
        logs = running.logs()
    assert sorted(heronpy_reports(out)) == sorted(tasks)
    assert final == expected, counted_off(final, expected)
    done = rollbacks(logs, plan.name)
    assert done >= 2, logs[-20000:]  # the first start's, then the kill's
    # The spout rewound to the offset a checkpoint held (a topology that lost its state
    # would also count exactly here, by reading everything again from line 0).
    reads = re.findall(r"reading from line (\d+) of", logs)
    assert reads[0] == "0" and any(int(n) > 0 for n in reads[1:]), reads
    with capsys.disabled():
        print(f"\nstateful heronpy topology on Spark: {done} rollbacks; the spout read "
              f"from lines {reads}; {running.times()}")
