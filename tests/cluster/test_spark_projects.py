"""streamparse example projects on the Spark standalone cluster, submitted as the
many-hosts tutorial submits them: the batching example (a BatchingBolt on tick tuples)
and the ShellBolt example (a bolt that is a plain script speaking multilang), side by
side, each in two containers; their results exact, their components' logs in the task
logs on the workers, which `heronbridge logs` prints and follows through the containers'
stream managers."""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from testkit import HERONBRIDGE, read_jsonl, wait_until

from heronbridge.runtime.scheduler import Home
from heronbridge.ui.events import sampled
from heronbridge.ui.logs import task_tail, tasks_of
from heronbridge.ui.tracker import Tracker

pytestmark = [pytest.mark.cluster, pytest.mark.integration]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "storm_topologies"
COUNT = 200  # batching.count
SENTENCES = (EXAMPLES / "shellbolt" / "src" / "data" / "sentences.txt").read_text()


@pytest.fixture(scope="module")
def projects(spark, zookeeper, tmp_path_factory):
    """Both examples submitted at once; yields (where, outputs) while they run."""
    folder = tmp_path_factory.mktemp("projects")
    uri, home = zookeeper.uri("projects"), folder / "home"
    where = ("--state", uri, "--home", home)
    outs = {name: folder / name for name in ("batching", "shellbolt")}
    submits = {name: subprocess.Popen(  # at once, as two users would
        [HERONBRIDGE, "submit", "--project", str(EXAMPLES / name), "-e", "prod",
         "--containers", "2", "--scheduler", "spark", "--spark-master", spark.master,
         *map(str, where), "-o", f"example.output.dir={out}"], cwd=folder, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        env={**os.environ, "HERONBRIDGE_STATE": ""}) for name, out in outs.items()}
    for name, submit in submits.items():
        said = submit.communicate(timeout=300)[0]
        assert submit.returncode == 0, f"heronbridge submit {name}:\n{said}"
    try:
        yield folder, where, outs
    finally:
        for name in outs:
            killed = subprocess.run([HERONBRIDGE, "kill", name, *map(str, where)], text=True,
                                    capture_output=True, timeout=300, cwd=folder, check=False,
                                    env={**os.environ, "HERONBRIDGE_STATE": ""})
            assert killed.returncode == 0, killed.stdout + killed.stderr


def task_logs(spark, name: str) -> str:
    return spark.logs(f"work-*/**/heronbridge/{name}/container-*/logs/task-*.log",
                      tail=100_000)


@pytest.mark.compat("api/BatchingBolt", "api/ShellBolt (a non-Python bolt)",
                    "api/component logs", on="spark")
def test_the_batching_and_shellbolt_examples_on_the_cluster(projects, spark):
    _, _, outs = projects
    values = Counter()
    sizes = Counter()
    for i in range(COUNT):
        sizes["abcde"[i % 5]] += 1
        values["abcde"[i % 5]] += (i * 37 + 11) % 100
    words = Counter(re.findall(r"[a-z]+", SENTENCES.lower()))

    def totals() -> tuple[Counter, Counter]:
        got_sizes, got_values = Counter(), Counter()
        for rows in read_jsonl(outs["batching"], "totals-*.jsonl").values():
            for r in rows:
                got_sizes[r["category"]] += r["size"]
                got_values[r["category"]] += r["sum"]
        return got_sizes, got_values

    def counts() -> dict[str, int]:
        final: dict[str, int] = {}
        for rows in read_jsonl(outs["shellbolt"], "counts-*.jsonl").values():
            for r in rows:
                final[r["word"]] = max(final.get(r["word"], 0), r["count"])
        return final

    def logs() -> str:
        return task_logs(spark, "batching")[-3000:] + task_logs(spark, "shellbolt")[-3000:]

    wait_until(lambda: totals() == (sizes, values), 120, "every record batched",
               on_timeout=lambda: f"{totals()}\n{logs()}")
    wait_until(lambda: counts() == dict(words), 120, "every word counted",
               on_timeout=lambda: f"{len(counts())} of {len(words)} words\n{logs()}")
    # What the components logged (pystorm's self.logger) is in their tasks' logs.
    assert f"all {COUNT} records emitted" in task_logs(spark, "batching")
    assert f"writing results to {outs['shellbolt']}" in task_logs(spark, "shellbolt")


@pytest.mark.compat("cli/heronbridge logs", on="spark")
def test_heronbridge_logs_prints_the_task_logs_from_the_workers(projects, spark):
    """The task logs are in the Spark workers' executor folders: each container's stream
    manager reads them for `heronbridge logs`, and `-f` goes on asking for new lines."""
    folder, where, _ = projects
    wait_until(lambda: "all 200 records emitted" in task_logs(spark, "batching"), 120,
               "the spout's last log line")
    command = [HERONBRIDGE, "logs", "batching", "records", "-n", "50", *map(str, where)]
    env = {**os.environ, "HERONBRIDGE_STATE": "", "PYTHONUNBUFFERED": "1"}
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=folder,
                          check=False, env=env)
    assert done.returncode == 0 and f"all {COUNT} records emitted" in done.stdout, \
        done.stdout + done.stderr
    [log] = spark.folder.glob("work-*/**/heronbridge/batching/container-*/logs/"
                              "task-*-records.log")
    state = Home(Path(where[3]), where[1]).open_statemgr()
    try:  # the page's log tail of one task, and its sampled tuples, by the same reader
        t = Tracker(state).refresh("batching")
        [(task, _)] = tasks_of(t, "records")
        assert f"all {COUNT} records emitted" in task_tail(state, t, Path(where[3]), task, 50)
        event = {"ts": int(time.time() * 1000), "component": "records", "task": task,
                 "stream": "default", "tasks": [], "root": 0, "values": ["on a worker"]}
        (log.parent / f"events-{task}-records.jsonl").write_text(json.dumps(event) + "\n")
        assert sampled(t, Path(where[3]), "records", 0, state) == [event]
        assert sampled(t, Path(where[3]), "records", 0) == []  # this host's only
    finally:
        state.close()
    with subprocess.Popen([*command, "-f"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, cwd=folder, env=env) as follow:
        lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=lambda: [lines.put(x) for x in follow.stdout],
                         daemon=True).start()
        try:
            assert f"all {COUNT} records emitted" in _line_with(lines, "records emitted")
            with log.open("a") as f:
                f.write("a line written while it follows\n")
            assert "[records " in _line_with(lines, "a line written while it follows")
        finally:
            follow.terminate()


def _line_with(lines: queue.Queue[str], text: str, timeout: float = 30) -> str:
    seen = []
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        try:
            seen.append(lines.get(timeout=left))
        except queue.Empty:
            break
        if text in seen[-1]:
            return seen[-1]
    raise AssertionError(f"no line with {text!r} in {timeout}s:\n" + "".join(seen[-20:]))
