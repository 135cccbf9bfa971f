"""streamparse's own `sparse submit`, `list` and `kill` against a `heronbridge nimbus` that
places what it is given on a Spark standalone cluster, with its state on ZooKeeper: the
same word count counts every word with its containers on the cluster's workers."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest
from testkit import HERONBRIDGE, read_jsonl, wait_until

from heronbridge.runtime.scheduler import Home
from heronbridge.runtime.statemgr import PHYSICAL_PLANS

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "nimbus"))
from nimbuskit import (  # noqa: E402
    READS,
    free_port,
    reads_agree,
    sparse,
    table_rows,
    wordcount_project,
    words_in_text,
)

from heronbridge.nimbus.submit import write_jar  # noqa: E402

pytestmark = [pytest.mark.cluster, pytest.mark.integration,
              pytest.mark.xdist_group("spark-b")]  # the second worker's cluster

WORKERS = {"127.0.0.2", "127.0.0.3"}


def ours(home: Path, uri: str) -> list[str]:
    """The command lines of the processes the endpoint started for its topologies (the
    Spark scheduler names the home, the containers the state)."""
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        line = " ".join(proc.info["cmdline"] or [])
        if "heronbridge.runtime." in line and (str(home) in line or uri in line):
            found.append(line)
    return found


@pytest.mark.compat("sparse/sparse submit", "sparse/sparse list", "sparse/sparse kill",
                    "nimbus/submitTopology", "nimbus/getClusterInfo",
                    "nimbus/killTopologyWithOpts", "nimbus/beginFileUpload", "nimbus/uploadChunk",
                    "nimbus/finishFileUpload", *READS, "cli/heronbridge nimbus", on="spark")
def test_sparse_submits_through_nimbus_onto_the_spark_cluster(zookeeper, spark, tmp_path):
    home, port, log = tmp_path / "home", free_port(), tmp_path / "nimbus.log"
    uri = zookeeper.uri("nimbus")
    env = {k: v for k, v in os.environ.items() if k != "HERONBRIDGE_STATE"}
    with log.open("wb") as out:
        nimbus = subprocess.Popen(
            [HERONBRIDGE, "nimbus", "--home", str(home), "--port", str(port), "--state", uri,
             "--scheduler", "spark", "--spark-master", spark.master],
            stdout=out, stderr=subprocess.STDOUT, env=env)
    output = lambda: log.read_text(errors="replace")  # noqa: E731
    try:
        counted_dir = tmp_path / "out"
        project = wordcount_project(tmp_path, port, counted_dir,
                                    options={"example.output.dir": str(counted_dir),
                                             "wordcount.rounds": 1, "topology.workers": 2})
        jar = write_jar(project / "src", tmp_path / "wordcount.jar")
        wait_until(lambda: sparse(project, "list", "-e", "test").returncode == 0, 60,
                   "heronbridge nimbus to answer sparse", on_timeout=output)
        done = sparse(project, "submit", "-e", "test", "-n", "wordcount", "-j", str(jar))
        assert done.returncode == 0, done.stdout + done.stderr + output()

        total = words_in_text()
        wait_until(lambda: sum(len(r) for r in read_jsonl(counted_dir).values()) == total,
                   180, f"the word count to count {total} words", on_timeout=output)
        state = Home(home, uri).open_statemgr()
        try:
            pplan = state.get(PHYSICAL_PLANS, "wordcount")
            assert {s.host for s in pplan.stmgrs} <= WORKERS, pplan
        finally:
            state.close()
        rows = table_rows(sparse(project, "list", "-e", "test").stdout)
        assert [(r["name"], r["status"]) for r in rows] == [("wordcount", "ACTIVE")]
        reads_agree(port, "wordcount", {"word_spout", "count_bolt"})

        killed = sparse(project, "kill", "-e", "test", "-n", "wordcount", "--wait", "1")
        assert killed.returncode == 0, killed.stdout + killed.stderr
        wait_until(lambda: "No topologies found." in sparse(project, "list", "-e", "test").stdout,
                   120, "sparse list to show no topology", on_timeout=output)
        # The topology's Spark driver follows the kill: it stops the containers and ends.
        wait_until(lambda: not ours(home, uri), 60, "the topology's processes to end",
                   on_timeout=lambda: f"still running: {ours(home, uri)}\n{output()}")
    finally:
        nimbus.send_signal(signal.SIGTERM)
        nimbus.wait(60)
