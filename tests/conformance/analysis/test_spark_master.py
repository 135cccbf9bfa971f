"""The analysis on a Spark master other than the embedded one: a standalone master and
one worker (pyspark's own jars), and the analysis of a synthetic run submitted to them
from a process of its own (a process holds one SparkContext, and the suite's is local)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from synthetic_runs import simulate, write
from testkit import wait_until

from heronbridge.conformance.trace import schema

pytestmark = [pytest.mark.integration, pytest.mark.conformance]

ANALYSE = """
import json, sys
from pathlib import Path
from synthetic_runs import scenario
from heronbridge.conformance.analysis import analyse
from pyspark.sql import SparkSession

result = analyse(Path(sys.argv[1]), scenario(), spark_master=sys.argv[2])
print(json.dumps({"stopped": SparkSession.getActiveSession() is None,
                  "verdicts": [[v.check, v.subject, v.verdict] for v in result.verdicts]}))
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spark_class(*args: str, log: Path) -> subprocess.Popen:
    import pyspark

    home = Path(pyspark.__file__).parent
    env = {**os.environ, "SPARK_HOME": str(home), "SPARK_LOCAL_IP": "127.0.0.1",
           "PYSPARK_PYTHON": sys.executable, "SPARK_NO_DAEMONIZE": "1"}
    return subprocess.Popen([str(home / "bin" / "spark-class"), *args], env=env,
                            stdout=log.open("w"), stderr=subprocess.STDOUT,
                            start_new_session=True)


@pytest.fixture(scope="module")
def standalone(tmp_path_factory):
    logs = tmp_path_factory.mktemp("spark-standalone")
    port, ui = free_port(), free_port()
    master_url = f"spark://127.0.0.1:{port}"
    master = spark_class("org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                         "--port", str(port), "--webui-port", str(ui), log=logs / "master.log")
    worker = spark_class("org.apache.spark.deploy.worker.Worker", master_url, "--host",
                         "127.0.0.1", "--cores", "1", "--memory", "1g", "--webui-port",
                         str(free_port()), "--work-dir", str(logs / "work"),
                         log=logs / "worker.log")

    def alive_workers() -> int:
        with urllib.request.urlopen(f"http://127.0.0.1:{ui}/json/", timeout=2) as reply:
            return json.load(reply)["aliveworkers"]

    try:
        wait_until(alive_workers, 90, "a standalone Spark worker to register",
                   on_timeout=lambda: "\n".join(p.read_text()[-3000:]
                                                for p in logs.glob("*.log")))
        yield master_url, ui
    finally:
        for proc in (worker, master):
            os.killpg(proc.pid, signal.SIGTERM)
        for proc in (worker, master):
            proc.wait(30)


def test_the_analysis_runs_on_a_standalone_master(standalone, tmp_path):
    master_url, ui = standalone
    runtime = simulate(schema.RUNTIME)
    runtime.find(ev=schema.EMIT, component="counter")[3]["values"] = schema.canonical(
        ["zebra", 1])
    write(tmp_path / "run", simulate(schema.STORM), runtime)

    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYTHONPATH": os.pathsep.join(
        [str(Path(__file__).parent), *filter(None, [os.environ.get("PYTHONPATH")])])}
    done = subprocess.run([sys.executable, "-c", ANALYSE, str(tmp_path / "run"), master_url],
                          env=env, capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])

    failed = [(c, s) for c, s, verdict in result["verdicts"] if verdict == "fail"]
    assert failed == [("parity", "counter/default")]
    assert result["stopped"] is True  # the session it made for the master is stopped
    with urllib.request.urlopen(f"http://127.0.0.1:{ui}/json/", timeout=5) as reply:
        apps = json.load(reply)["completedapps"]
    assert [a["name"] for a in apps] == ["heronbridge-conformance"]
