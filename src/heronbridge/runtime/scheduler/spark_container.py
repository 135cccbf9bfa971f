"""One container inside a long-running Spark task: what the Spark scheduler's task runs
in PySpark's Python worker on whichever Spark executor it was given.

It finds the topology's package among the application's archives, learns the address
this worker's peers reach it on, and runs the container's executor (stream manager,
metrics manager, its tasks; container 0 also the topology master) as a child until it
exits, whose code the task returns. The executor dies with the task: when Spark cancels
the task or loses its executor, the executor is told to stop (SIGTERM), in order.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..addresses import HOST_ENV
from ..errors import where
from ..plan.relocate import RELOCATE_ENV
from .environments import install_shipped
from .home import Home, default_home
from .package import ENVIRONMENT, environment_of, relocations
from .processes import die_with_parent, module_command

# Where a Spark worker says which address it serves on (standalone and YARN hosts set
# SPARK_LOCAL_IP when they have several; Kubernetes gives each executor pod its IP).
ADDRESS_ENVS = (HOST_ENV, "SPARK_LOCAL_IP", "SPARK_EXECUTOR_POD_IP")
# The Python worker's own plumbing, which the container's processes must not inherit
# (a secret of Spark's, PySpark's fixed hash seed, its import path).
SPARK_ONLY = ("PYTHON_WORKER_FACTORY_SECRET", "PYTHONHASHSEED", "PYTHON_UDF_BATCH_SIZE",
              "PYTHONDONTWRITEBYTECODE")


@dataclass(frozen=True)
class ContainerTask:
    """What one container's Spark task needs. `identity` is the environment that opens
    the state (the ZooKeeper digest identity): it travels inside Spark's task, which
    the driver sends its executors, and reaches the executor in its environment only."""

    topology: str
    topology_id: str
    container: int
    state: str
    package: str  # the package's name among the application's archives
    identity: dict[str, str] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class Outcome:
    container: int
    host: str
    code: int
    workdir: str


def worker_address(state_uri: str) -> str:
    """The address this worker's peers reach it on: what the host says (see
    ADDRESS_ENVS), else the local address of the route to the state's first server."""
    for name in ADDRESS_ENVS:
        if os.environ.get(name):
            return os.environ[name]
    netloc = urlsplit(state_uri).netloc.split(",")[0]
    host, _, port = netloc.rpartition(":") if ":" in netloc else (netloc, "", "2181")
    family, kind, proto, _, address = socket.getaddrinfo(
        host.strip("[]"), int(port), type=socket.SOCK_DGRAM)[0]
    with socket.socket(family, kind, proto) as probe:
        probe.connect(address)  # UDP: picks the route, sends nothing
        return probe.getsockname()[0]


def container_env(environ: dict[str, str], task: ContainerTask, host: str,
                  package: Path, more: list[tuple[str, str]] | None = None) -> dict[str, str]:
    env = {k: v for k, v in environ.items()
           if k not in SPARK_ONLY and not k.startswith(("SPARK_", "PYSPARK_"))}
    # PySpark's own entries on the import path (its zip, py4j, Spark's jar) stay behind.
    path = [p for p in environ.get("PYTHONPATH", "").split(os.pathsep)
            if p and not p.endswith((".jar", "pyspark.zip")) and "py4j-" not in p]
    if path:
        env["PYTHONPATH"] = os.pathsep.join(path)
    else:
        env.pop("PYTHONPATH", None)
    env.update(task.identity)
    env[HOST_ENV] = host
    env[RELOCATE_ENV] = json.dumps([*relocations(package, task.topology_id), *(more or [])])
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


def _private_dir(path: Path) -> Path:
    """Create `path` and any missing parent owner-only (0700)."""
    missing = []
    while not path.exists():
        missing.append(path)
        path = path.parent
    for folder in reversed(missing):
        folder.mkdir(mode=0o700, exist_ok=True)
    return missing[0] if missing else path


def run(task: ContainerTask) -> Outcome:
    """Run the container until its executor exits (in the Spark task)."""
    from pyspark import SparkFiles

    package = Path(SparkFiles.get(task.package)).resolve()
    host = worker_address(task.state)
    workdir = Path.cwd() / "heronbridge" / task.topology / f"container-{task.container}"
    _private_dir(workdir)
    with (workdir / "executor.log").open("ab") as out:
        out.write(f"\n=== container {task.container} of {task.topology_id} on {host} at "
                  f"{time.ctime()} ===\n".encode())
        out.flush()
        env = container_env(dict(os.environ), task, host, package,
                            _environment(task, package, out))
        # Its own process group: the container is one unit to stop; it dies with us.
        executor = subprocess.Popen(
            module_command("scheduler.executor", "--state", task.state,
                           "--topology", task.topology, "--container", str(task.container),
                           "--workdir", str(workdir)),
            stdin=subprocess.DEVNULL, stdout=out, stderr=out, cwd=workdir, env=env,
            start_new_session=True, preexec_fn=die_with_parent())
    return Outcome(task.container, host, executor.wait(), str(workdir))


def _environment(task: ContainerTask, package: Path, out: Any) -> list[tuple[str, str]]:
    """The topology's own virtualenv on this host, installed from the package's wheels
    with no package index into this host's cache (once per content: a restarted
    container finds it there); the [submitter's, this host's] folder pair its tasks'
    interpreter is relocated by."""
    shipped = environment_of(package)
    if not shipped:
        return []

    def progress(line: str) -> None:
        out.write(f"{line}\n".encode())
        out.flush()

    home = Home(default_home())
    home.ensure()
    built = install_shipped(shipped, package / ENVIRONMENT, where(task.topology),
                            home.root / "virtualenvs", progress)
    return [(shipped["root"], str(built.root))]


def partition(task: ContainerTask):  # noqa: ANN201 - a Spark partition function
    """The function of the container's one-partition job."""
    return lambda _rows: [run(task)]
