"""streamparse's own `sparse submit`, `list` and `kill` against a `heronbridge nimbus` that
places what it is given on a Spark standalone cluster, with its state on ZooKeeper: the
same word count counts every word with its containers on the cluster's workers."""

from __future__ import annotations

import copy
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest
from testkit import HERONBRIDGE, read_jsonl, ui_verb, wait_until

from heronbridge.runtime.scheduler import Home
from heronbridge.runtime.statemgr import PHYSICAL_PLANS

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "nimbus"))
from nimbuskit import (  # noqa: E402
    READS,
    blob_round_trip,
    free_port,
    reads_agree,
    sparse,
    storm28,
    table_rows,
    wordcount_project,
    words_in_text,
)

from heronbridge.nimbus import idl  # noqa: E402
from heronbridge.nimbus.submit import upload, write_jar  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ui"))
from test_storm_clients import CLIENT, GONE_IN_STORM_2, _missing, _tables  # noqa: E402

pytestmark = [pytest.mark.cluster, pytest.mark.integration,
              # the tests after the first judge what it did: one worker, in order
              pytest.mark.xdist_group("spark_nimbus")]

WORKERS = {"127.0.0.2", "127.0.0.3"}
BLOBS = tuple(f"nimbus/{method}" for method in (
    "beginCreateBlob", "beginUpdateBlob", "uploadBlobChunk", "finishBlobUpload",
    "cancelBlobUpload", "getBlobMeta", "setBlobMeta", "beginBlobDownload", "downloadBlobChunk",
    "deleteBlob", "listBlobs", "getBlobReplication", "updateBlobReplication",
    "isRemoteBlobExists", "createStateInZookeeper"))


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
                    "nimbus/finishFileUpload", *READS, "cli/heronbridge nimbus",
                    "nimbus/submitTopologyWithOpts", "nimbus/killTopology", "nimbus/setLogConfig",
                    "nimbus/debug", "nimbus/rebalance", "sparse/sparse stats",
                    "sparse/sparse slot_usage", "sparse/sparse worker_uptime", *BLOBS,
                    on="spark")
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
        kept = reads_agree(port, "wordcount", {"word_spout", "count_bolt"})
        streamparse_reads_the_ui(home, uri, tmp_path)
        sparse_over_ssh(spark, project, tmp_path)

        killed = sparse(project, "kill", "-e", "test", "-n", "wordcount", "--wait", "1")
        assert killed.returncode == 0, killed.stdout + killed.stderr
        wait_until(lambda: "No topologies found." in sparse(project, "list", "-e", "test").stdout,
                   120, "sparse list to show no topology", on_timeout=output)
        # The topology's Spark driver follows the kill: it stops the containers and ends.
        wait_until(lambda: not ours(home, uri), 60, "the topology's processes to end",
                   on_timeout=lambda: f"still running: {ours(home, uri)}\n{output()}")

        state = Home(home, uri).open_statemgr()
        try:
            operate_on_the_cluster(spark, port, kept, jar, tmp_path / "again", output,
                                   lambda name: state.get(PHYSICAL_PLANS, name) is not None)
        finally:
            state.close()
        wait_until(lambda: not ours(home, uri), 60, "the second topology's processes to end",
                   on_timeout=lambda: f"still running: {ours(home, uri)}\n{output()}")
    finally:
        nimbus.send_signal(signal.SIGTERM)
        nimbus.wait(60)


def streamparse_reads_the_ui(home: Path, uri: str, folder: Path) -> None:
    """`sparse stats`, `worker_uptime` and `slot_usage` (streamparse's own code) read
    `heronbridge ui` on the topology's ZooKeeper state as they read Storm's UI: nothing
    missing but what Storm 2 no longer sends, the workers' hosts in their tables."""
    with ui_verb(home, "--state", uri) as get:
        get("/api/v1/cluster/summary")
        found = json.loads((home / "ui.json").read_text())
        (folder / "config.json").write_text(json.dumps({"envs": {"ui": {
            "nimbus": found["host"], "use_ssh_for_nimbus": False, "ui.port": found["port"]}}}))
        client = CLIENT.replace('"shown"', '"wordcount"').replace(
            '("numbers", "work", "sink")', '("word_spout", "count_bolt")')
        done = subprocess.run([sys.executable, "-c", client], cwd=folder, capture_output=True,
                              text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    tables = _tables(done.stdout)
    missing = _missing(tables)
    assert missing == {("Cluster summary", c) for c in GONE_IN_STORM_2}, done.stdout
    assert {"Topology summary", "Spout stats", "Bolt stats", "Worker Stats",
            "Slot (and Executor) Counts by Topology"} <= set(tables), done.stdout
    assert WORKERS <= {cell for _, rows in (tables["Worker Stats"],) for row in rows
                       for cell in row}, done.stdout


# sparse's commands that log in to each worker over SSH, run by the test above on the
# running word count; the tests after it judge what they did (test_sparse_ssh.py's, on Spark).
OVER_SSH: dict[str, tuple[subprocess.CompletedProcess, list[Path], list[Path]]] = {}
NO_SSH = ("sparse runs it on each worker over SSH (fabric); heronbridge serves no SSH: "
          "`heronbridge logs` reads task logs, topologies ship their own virtualenvs")


def sparse_over_ssh(spark, project: Path, folder: Path) -> None:
    config = json.loads((project / "config.json").read_text())
    config["envs"]["workers"] = {  # the workers asked of Nimbus, as a Storm user's are
        **{k: v for k, v in config["envs"]["test"].items() if k != "workers"},
        "use_virtualenv": True, "virtualenv_root": str(folder / "virtualenvs")}
    (project / "config.json").write_text(json.dumps(config, indent=2))

    def task_logs() -> list[Path]:
        return sorted(spark.folder.glob(
            "work-*/**/heronbridge/wordcount/container-*/logs/task-*-count_bolt.log"))

    def built() -> list[Path]:
        return sorted((folder / "virtualenvs" / "wordcount" / "bin").glob("python"))

    for command, timeout, found in (("tail", 60, task_logs), ("remove_logs", 60, task_logs),
                                    ("update_virtualenv", 120, built)):
        before = found()
        done = sparse(project, command, "-e", "workers", "-n", "wordcount", timeout=timeout)
        OVER_SSH[command] = (done, before, found())


@pytest.mark.compat("sparse/sparse tail", on="spark")
@pytest.mark.xfail(strict=True, raises=AssertionError, reason=NO_SSH)
def test_sparse_tail_prints_the_task_logs_on_the_workers():
    done, logs, _ = OVER_SSH["tail"]
    last = logs[0].read_text().splitlines()[-1]
    assert done.returncode == 0 and last in done.stdout, done.stdout + done.stderr


@pytest.mark.compat("sparse/sparse remove_logs", on="spark")
@pytest.mark.xfail(strict=True, raises=AssertionError, reason=NO_SSH)
def test_sparse_remove_logs_removes_the_task_logs_on_the_workers():
    done, before, after = OVER_SSH["remove_logs"]
    assert done.returncode == 0 and before and not after, done.stdout + done.stderr


@pytest.mark.compat("sparse/sparse update_virtualenv", on="spark")
@pytest.mark.xfail(strict=True, raises=AssertionError, reason=NO_SSH)
def test_sparse_update_virtualenv_builds_it_on_the_workers():
    done, _, built = OVER_SSH["update_virtualenv"]
    assert done.returncode == 0 and built, done.stdout + done.stderr


def operate_on_the_cluster(spark, port: int, kept: tuple[object, dict], jar: Path,
                           out: Path, output, started) -> None:
    """The first topology's StormTopology and conf (`reads_agree`), submitted again under
    another name with SubmitOptions (inactive), naming a dependency jar put in the blob
    store (every blob method), its spout reading for ever: activated,
    its tasks on the workers take a log level for 5 s (setLogConfig) and write half the
    spout's emits beside its log (debug); rebalanced to three counting tasks; killed with
    killTopology; the blob deleted."""
    t, client, name = idl(), storm28(port), "wordcount-again"
    topology, conf = kept
    topology = copy.copy(topology)
    topology.dependency_jars = ["dep-spark.jar"]
    conf = {**{k: v for k, v in conf.items() if k not in ("storm.id", "topology.name")},
            "wordcount.rounds": 0, "example.output.dir": str(out),
            "topology.message.timeout.secs": 1}  # what killTopology waits, as in Storm

    def files(pattern: str) -> list[Path]:
        return sorted(spark.folder.glob(f"work-*/**/heronbridge/{name}/container-*/logs/"
                                        + pattern))

    try:
        dependency = blob_round_trip(client, "dep-spark.jar")
        client.submitTopologyWithOpts(name, upload(client, jar), json.dumps(conf), topology,
                                      t.SubmitOptions(t.TopologyInitialStatus.INACTIVE))
        assert client.getTopologySummaryByName(name).status == "INACTIVE"
        # Storm takes activate at once; this Nimbus refuses it ("not running") until the
        # topology's physical plan is out: on Spark, until its containers have started.
        wait_until(lambda: started(name), 120, "the second topology to start",
                   on_timeout=output)
        assert client.getTopologySummaryByName(name).status == "INACTIVE"
        # The dependency jar went with the topology's resources to the workers.
        copies = list(spark.folder.glob(f"work-*/**/heronbridge-{name}-*/resources/**/"
                                        "dep-spark.jar"))
        assert copies and all(p.read_bytes() == dependency for p in copies), spark.logs()
        client.activate(name)
        wait_until(lambda: read_jsonl(out), 120, "counts from the second topology",
                   on_timeout=output)
        summary = client.getTopologySummaryByName(name)
        client.setLogConfig(summary.id, t.LogConfig(
            {"ROOT": t.LogLevel(t.LogLevelAction.UPDATE, "DEBUG", 5)}))
        logs = files("task-*-count_bolt.log")
        assert len(logs) == 2, spark.logs()
        wait_until(lambda: all("log level of 'root' set to DEBUG for 5s" in p.read_text()
                               for p in logs), 30, "the level set in every count_bolt task")
        client.debug(name, "word_spout", True, 50.0)
        [events] = wait_until(lambda: [p for p in files("events-*-word_spout.jsonl")
                                       if p.stat().st_size], 30,
                              "sampled words beside the spout's log on its worker")
        assert json.loads(events.read_text().splitlines()[0])["component"] == "word_spout"
        client.debug(name, "", False, 0.0)

        client.rebalance(name, t.RebalanceOptions(num_executors={"count_bolt": 3}))
        wait_until(lambda: (s := client.getTopologySummaryByName(name)).status == "ACTIVE"
                   and s.num_tasks == summary.num_tasks + 1, 180,
                   "the rebalanced topology with three counting tasks", on_timeout=output)
        wait_until(lambda: len(files("task-*-count_bolt.log")) == 3, 60,
                   "the third counting task's log on a worker", on_timeout=output)

        client.killTopology(name)
        wait_until(lambda: name not in {s.name for s in client.getTopologySummaries()}, 120,
                   f"{name} gone after killTopology", on_timeout=output)
        client.deleteBlob("dep-spark.jar")
        assert not client.isRemoteBlobExists("dep-spark.jar")
    finally:
        client.close()
