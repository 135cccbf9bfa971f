"""The Spark scheduler's parts that need no cluster: the topology's package and the plan
relocated to a host's copy of it, a container's environment and address, and what is
refused before anything is submitted. (Unmarked: these run with the unit tests.)"""

from __future__ import annotations

import json
import os
import subprocess
import tarfile
from pathlib import Path

import pytest
from testkit import HERONBRIDGE

from heronbridge.runtime import TopologyBuilder
from heronbridge.runtime.errors import SchedulerError
from heronbridge.runtime.plan.codec import topology_from_proto, topology_to_proto
from heronbridge.runtime.plan.relocate import RELOCATE_ENV
from heronbridge.runtime.scheduler.package import MANIFEST, build, relocations
from heronbridge.runtime.scheduler.spark import parse_conf, require_spark
from heronbridge.runtime.scheduler.spark_container import (
    ContainerTask,
    container_env,
    worker_address,
)
from heronbridge.runtime.statemgr import ZK_DIGEST_ENV, open_statemgr


def a_plan(workdir: Path, extra: Path):
    resources = workdir / "resources"
    b = TopologyBuilder("shipped", {"heronbridge.storm.resources": str(resources),
                                    "paths": [str(extra / "data.txt"), "/elsewhere"],
                                    "near": str(resources) + "-not-inside"})
    # By import path: a class object would put this test's folder on the Python path too.
    b.spout("source", "spouts:Source", outputs=["n"],
            config={"own": str(resources / "data" / "log.txt")})
    b.bolt("sink", "bolts:Sink", inputs=["source"])
    b.add_python_path(resources)
    b.add_python_path(resources / "lib")  # inside resources: shipped with it
    b.add_python_path(extra)
    return b.build()


@pytest.fixture
def submitted(tmp_path):
    workdir, extra = tmp_path / "home" / "current", tmp_path / "project" / "topologies"
    (workdir / "resources" / "lib").mkdir(parents=True)
    (workdir / "resources" / "bolts.py").write_text("X = 1\n")
    (workdir / "resources" / "__pycache__").mkdir()
    (workdir / "resources" / "__pycache__" / "bolts.cpython-311.pyc").write_bytes(b"x")
    extra.mkdir(parents=True)
    (extra / "data.txt").write_text("data\n")
    (extra / ".git").mkdir()
    (extra / ".git" / "HEAD").write_text("ref\n")
    return a_plan(workdir, extra), workdir, extra


def test_the_package_holds_the_projects_folders_and_a_manifest(submitted, tmp_path):
    plan, workdir, extra = submitted
    package = build(plan, "shipped-1", workdir, tmp_path / "package.tar.gz")
    assert package.stat().st_mode & 0o777 == 0o600
    with tarfile.open(package) as tar:
        names = set(tar.getnames())
        manifest = json.loads(tar.extractfile(MANIFEST).read())
        tar.extractall(tmp_path / "unpacked", filter="data")
    assert {"resources/bolts.py", "resources/lib", "path-2/data.txt"} <= names
    assert not any("__pycache__" in n or ".git" in n for n in names)
    assert manifest["folders"] == {str(workdir / "resources"): "resources",
                                   str(extra): "path-2"}
    copy = tmp_path / "unpacked"
    assert relocations(copy, "shipped-1") == [
        (str(workdir / "resources"), str(copy / "resources")), (str(extra), str(copy / "path-2"))]
    with pytest.raises(SchedulerError, match="belongs to 'shipped-1', expected 'shipped-2'"):
        relocations(copy, "shipped-2")


def test_a_plan_read_on_another_host_names_that_hosts_copies(submitted, monkeypatch):
    plan, workdir, extra = submitted
    resources = workdir / "resources"
    stored = topology_to_proto(plan, "shipped-1")
    assert topology_from_proto(stored).python_path == plan.python_path  # no relocation set
    monkeypatch.setenv(RELOCATE_ENV, json.dumps([[str(resources), "/w/pkg/resources"],
                                                 [str(extra), "/w/pkg/path-2"]]))
    here = topology_from_proto(stored)
    assert here.python_path == ["/w/pkg/resources", "/w/pkg/resources/lib", "/w/pkg/path-2"]
    assert here.config["heronbridge.storm.resources"] == "/w/pkg/resources"
    assert here.config["paths"] == ["/w/pkg/path-2/data.txt", "/elsewhere"]
    assert here.config["near"] == str(resources) + "-not-inside"  # a prefix, not a folder
    assert here.components["source"].config["own"] == "/w/pkg/resources/data/log.txt"


def test_a_container_gets_its_hosts_address_and_none_of_sparks_plumbing(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / MANIFEST).write_text(json.dumps(
        {"topology": "t", "topology_id": "t-1", "folders": {"/submit/res": "resources"}}))
    task = ContainerTask("t", "t-1", 1, "zk://127.0.0.1:2181/hb", "heronbridge-t-1",
                         {ZK_DIGEST_ENV: "me:secret"})
    assert "me:secret" not in repr(task)
    environ = {"PATH": "/bin", "PYTHON_WORKER_FACTORY_SECRET": "s", "PYTHONHASHSEED": "0",
               "SPARK_LOCAL_IP": "127.0.0.2", "PYSPARK_PYTHON": "python3",
               "PYTHONPATH": "/spark/python/lib/pyspark.zip:/spark/python/lib/py4j-0.10.9.9-"
                             "src.zip:/spark/jars/spark-core_2.13-4.0.jar:/mine"}
    env = container_env(environ, task, "127.0.0.2", package)
    assert env["PATH"] == "/bin" and env["PYTHONPATH"] == "/mine"
    assert env["HERONBRIDGE_HOST"] == "127.0.0.2" and env[ZK_DIGEST_ENV] == "me:secret"
    assert json.loads(env[RELOCATE_ENV]) == [["/submit/res", str(package / "resources")]]
    assert not {"PYTHON_WORKER_FACTORY_SECRET", "PYTHONHASHSEED", "SPARK_LOCAL_IP",
                "PYSPARK_PYTHON"} & set(env)


def test_a_worker_address_is_what_the_host_says_else_the_route_to_zookeeper(monkeypatch):
    for name in ("HERONBRIDGE_HOST", "SPARK_LOCAL_IP", "SPARK_EXECUTOR_POD_IP"):
        monkeypatch.delenv(name, raising=False)
    assert worker_address("zk://127.0.0.1:2181,10.0.0.9:2181/hb") == "127.0.0.1"
    monkeypatch.setenv("SPARK_EXECUTOR_POD_IP", "10.1.2.3")
    assert worker_address("zk://127.0.0.1:2181/hb") == "10.1.2.3"
    monkeypatch.setenv("SPARK_LOCAL_IP", "127.0.0.3")
    assert worker_address("zk://127.0.0.1:2181/hb") == "127.0.0.3"


def test_spark_settings_are_key_value_pairs():
    assert parse_conf(["spark.task.cpus=2", "spark.a= b=c"]) == (
        ("spark.task.cpus", "2"), ("spark.a", " b=c"))
    with pytest.raises(SchedulerError, match="KEY=VALUE"):
        parse_conf(["spark.task.cpus"])


def test_spark_needs_zookeeper_state(tmp_path):
    with pytest.raises(SchedulerError, match=r"needs the ZooKeeper state manager \(--state zk"):
        require_spark(open_statemgr(str(tmp_path / "state")), "t")


TOPOLOGY = str(Path(__file__).resolve().parents[1] / "runtime" / "cli_topology.py")


@pytest.mark.parametrize(("args", "message"), [
    (["--scheduler", "spark"], "--scheduler spark needs --spark-master URL"),
    (["--spark-master", "spark://127.0.0.1:7077"], "apply to --scheduler spark"),
    (["--scheduler", "spark", "--spark-master", "spark://127.0.0.1:7077"],
     "needs the ZooKeeper state manager"),
])
def test_submit_refuses_a_spark_run_it_cannot_do_before_submitting(tmp_path, args, message):
    env = {**os.environ, "HERONBRIDGE_HOME": str(tmp_path / "hb"), "HERONBRIDGE_STATE": ""}
    done = subprocess.run([HERONBRIDGE, "submit", TOPOLOGY, *args], capture_output=True,
                          text=True, timeout=60, env=env, cwd=tmp_path, check=False)
    said = " ".join((done.stdout + done.stderr).split())
    assert done.returncode == 1 and message in said, said
    listed = subprocess.run([HERONBRIDGE, "list"], capture_output=True, text=True,
                            timeout=60, env=env, cwd=tmp_path, check=False)
    assert "no topologies" in listed.stdout
