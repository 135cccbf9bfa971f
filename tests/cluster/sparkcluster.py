"""A Spark standalone cluster for the cluster tests and the scale-out benchmark: pyspark's
own Master and Worker classes (`spark-class`; the pip package has no start scripts), the
master on 127.0.0.1 and each worker on a loopback address of its own (127.0.0.2,
127.0.0.3, ...), so that every worker is a host of its own to the topology and all
traffic stays on loopback. Authenticated and encrypted (spark.authenticate with a secret
made here, spark.network.crypto), as a cluster that carries a topology's ZooKeeper
identity in its tasks should be. Drivers started with `env()` (SPARK_CONF_DIR) use it."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import psutil
from zkserver import free_port, kill_schedulers

MASTER = "org.apache.spark.deploy.master.Master"
WORKER = "org.apache.spark.deploy.worker.Worker"
# Small, quick JVMs: the machine running the tests may have two cores.
JAVA_OPTS = "-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xss512k"


class SparkCluster:
    def __init__(self, folder: Path, workers: tuple[str, ...] = ("127.0.0.2", "127.0.0.3"),
                 cores: int = 2, memory: str = "2g") -> None:
        import pyspark

        self.home = Path(pyspark.__file__).parent
        self.folder = folder
        self.workers = tuple(workers)
        self.cores, self.memory = cores, memory
        self.conf_dir = folder / "conf"
        self.port, self.ui_port = free_port(), free_port()
        self.master = f"spark://127.0.0.1:{self.port}"
        self.defaults = self.conf_dir / "spark-defaults.conf"
        self.pids: list[int] = []  # each process leads a session of its own
        self._started: list[subprocess.Popen] = []

    def _configure(self) -> None:
        self.conf_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        defaults = self.defaults
        fd = os.open(defaults, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write("\n".join(f"{k} {v}" for k, v in {
                "spark.authenticate": "true",
                "spark.authenticate.secret": secrets.token_hex(24),
                "spark.network.crypto.enabled": "true",
                "spark.io.encryption.enabled": "true",
                "spark.driver.host": "127.0.0.1",
                "spark.driver.bindAddress": "127.0.0.1",
                "spark.ui.enabled": "false",
                "spark.driver.memory": "512m",
                "spark.executor.memory": "512m",
                "spark.driver.extraJavaOptions": JAVA_OPTS,
                "spark.executor.extraJavaOptions": JAVA_OPTS,
            }.items()) + "\n")

    def describe(self) -> dict:
        """How to reach and stop the running cluster, from another process (JSON)."""
        return {"folder": str(self.folder), "workers": list(self.workers),
                "cores": self.cores, "memory": self.memory, "port": self.port,
                "ui_port": self.ui_port, "pids": self.pids}

    @classmethod
    def attach(cls, described: dict) -> SparkCluster:
        """The cluster another process started and described."""
        cluster = cls(Path(described["folder"]), tuple(described["workers"]),
                      described["cores"], described["memory"])
        cluster.port, cluster.ui_port = described["port"], described["ui_port"]
        cluster.master = f"spark://127.0.0.1:{cluster.port}"
        cluster.pids = list(described["pids"])
        return cluster

    def env(self) -> dict[str, str]:
        """The environment of a driver (a Spark scheduler) on this cluster."""
        return {**os.environ, "SPARK_CONF_DIR": str(self.conf_dir),
                "PYSPARK_PYTHON": sys.executable}

    def _spark_class(self, name: str, host: str, *args: str) -> subprocess.Popen:
        env = {**self.env(), "SPARK_HOME": str(self.home), "SPARK_LOCAL_IP": host,
               "SPARK_NO_DAEMONIZE": "1", "SPARK_DAEMON_MEMORY": "256m",
               "SPARK_DAEMON_JAVA_OPTS": JAVA_OPTS}
        with (self.folder / f"{name}.log").open("ab") as log:
            return subprocess.Popen(
                [str(self.home / "bin" / "spark-class"), *args, "--properties-file",
                 str(self.defaults)], env=env, stdout=log, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, start_new_session=True)

    def start(self, timeout: float = 120.0) -> None:
        self._configure()
        processes = [self._spark_class(
            "master", "127.0.0.1", MASTER, "--host", "127.0.0.1", "--port", str(self.port),
            "--webui-port", str(self.ui_port))]
        for host in self.workers:
            processes.append(self._spark_class(
                f"worker-{host}", host, WORKER, self.master, "--host", host,
                "--cores", str(self.cores), "--memory", self.memory, "--webui-port", "0",
                "--work-dir", str(self.work_dir(host))))
        self.pids, self._started = [p.pid for p in processes], processes
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            dead = [p.args[1] for p in processes if p.poll() is not None]
            if dead:
                self.stop()
                msg = f"Spark exited at start-up: see {self.folder}/*.log"
                raise RuntimeError(msg)
            if self.status().get("aliveworkers") == len(self.workers):
                return
            time.sleep(0.2)
        self.stop()
        msg = f"the Spark workers did not register within {timeout}s: see {self.folder}"
        raise RuntimeError(msg)

    def work_dir(self, host: str) -> Path:
        return self.folder / f"work-{host}"

    def status(self) -> dict:
        """The master's status page (/json/), {} while it does not answer."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.ui_port}/json/",
                                        timeout=2) as reply:
                return json.load(reply)
        except OSError:
            return {}

    def logs(self, pattern: str = "**/*.log", tail: int = 4000) -> str:
        """The end of every matching log under the cluster's folder (its own and the
        containers' under the workers' work folders)."""
        return "\n".join(f"--- {p}\n{p.read_text(errors='replace')[-tail:]}"
                         for p in sorted(self.folder.glob(pattern)))

    def stop(self) -> None:
        """Stop the cluster, from the process that started it or any other."""
        kill_schedulers("--spark-master", self.master.__eq__)  # drivers a test left behind
        for pid in reversed(self.pids):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGTERM)
        deadline = time.monotonic() + 30
        for pid in reversed(self.pids):
            while _alive(pid) and time.monotonic() < deadline:
                time.sleep(0.1)
            if _alive(pid):
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(pid, signal.SIGKILL)
        self.pids.clear()


def _alive(pid: int) -> bool:
    """Still running (a child of this process that ended is reaped here)."""
    with contextlib.suppress(ChildProcessError):
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return False
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
