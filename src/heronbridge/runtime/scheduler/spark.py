"""The Spark scheduler: a topology's containers as long-running tasks on a Spark cluster.

The scheduler is a Spark driver (client mode: it runs where `submit` ran). It ships the
topology's package to the cluster's executors with `addArchive`, then runs one plain
one-task job per container, each from a thread of its own, so that Spark starts them
together and one container's failure ends only its own job (a barrier stage would take
every container down with it). Each job's task runs the container (spark_container);
when it ends — its executor exited, or Spark lost the task — the thread submits the
container's job again, after a back-off, and Spark places it on any worker with a free
core; the other containers keep running. Jobs carry a job group per container, with
interrupt on cancel, so that stopping cancels exactly this topology's tasks.

Containers on other hosts find each other through the state manager, so this scheduler
needs ZooKeeper state. Spark runs the tasks' Python with $PYSPARK_PYTHON, else
`spark.pyspark.python`, else this process's interpreter; heronbridge must be installed
there on every worker.
"""

from __future__ import annotations

import logging
import os
import re
import socket
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any

from ..config import TopologyConfig
from ..errors import SchedulerError, StateManagerError, where
from ..plan.codec import topology_from_proto
from ..proto import plans_pb2
from ..statemgr import PACKING_PLANS, SCHEDULERS, TOPOLOGIES, StateManager
from .environments import EnvironmentBuildError
from .home import Home
from .lifecycle import STATE_AT_STOP_SECS, clear_at_stop, still_submitted
from .local import ContainersFollower
from .package import build
from .restarts import Backoff
from .spark_container import ContainerTask, Outcome, partition

log = logging.getLogger("heronbridge.runtime.scheduler.spark")

# What a container raises when the topology's virtualenv cannot be installed on its host.
ENVIRONMENT_FAILED = EnvironmentBuildError.__name__
START_TIMEOUT_SECS = 240.0  # a Spark application, its executors, then the containers
STOP_GRACE_SECS = 20.0
CANCEL_GRACE_SECS = 10.0  # for the jobs' threads to end once their jobs are cancelled
WAITING_REPORT_SECS = 30.0
PACKAGE = "package.tar.gz"


@dataclass(frozen=True)
class SparkOptions:
    """Where to run: a Spark master URL and Spark settings (`spark.*`) for the
    application, over what the cluster's spark-defaults.conf says."""

    master: str
    conf: tuple[tuple[str, str], ...] = ()

    def argv(self) -> list[str]:
        args = ["--spark-master", self.master]
        for key, value in self.conf:
            args += ["--spark-conf", f"{key}={value}"]
        return args


def parse_conf(items: list[str] | None) -> tuple[tuple[str, str], ...]:
    out = []
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            msg = f"--spark-conf expects KEY=VALUE (a Spark setting), received {item!r}"
            raise SchedulerError(msg)
        out.append((key.strip(), value))
    return tuple(out)


def require_spark(statemgr: StateManager, name: str) -> None:
    """Refuse, before anything is submitted, what the Spark scheduler cannot run on."""
    if not statemgr.uri.startswith("zk://"):
        msg = (f"{where(name)}: the Spark scheduler needs the ZooKeeper state manager "
               f"(--state zk://HOST:PORT/ROOT), received {statemgr.uri!r}: containers on the "
               "cluster's workers find each other and their plan through it, and a local "
               "folder is this host's alone")
        raise SchedulerError(msg)
    try:
        import pyspark  # noqa: F401
    except ImportError as exc:
        msg = (f"{where(name)}: the Spark scheduler needs pyspark (pip install "
               f"'heronbridge[cluster]'): {exc}")
        raise SchedulerError(msg) from exc


def _reason(exc: BaseException) -> str:
    """One line of a failed job's error: Spark's cause, and the Python error if any."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    cause = next((line.split("most recent failure:", 1)[1].strip() for line in lines
                  if "most recent failure:" in line), lines[0] if lines else repr(exc))
    python = next((line for line in reversed(lines)
                   if re.match(r"^[A-Za-z_][\w.]*(Error|Exception|Exit): ", line)
                   and not line.startswith(("org.", "java.", "py4j."))), None)
    text = cause if python is None or python in cause else f"{cause} ... {python}"
    return text[:400]


class SparkSupervisor:
    """Runs a submitted topology's containers on a Spark cluster; `stop()` ends them and
    clears the topology's state."""

    def __init__(self, statemgr: StateManager, home: Home, name: str,
                 options: SparkOptions) -> None:
        require_spark(statemgr, name)
        topology = statemgr.get(TOPOLOGIES, name)
        packing = statemgr.get(PACKING_PLANS, name)
        if topology is None or packing is None:
            msg = f"{where(name)}: not submitted (no topology or packing plan in {statemgr.uri})"
            raise SchedulerError(msg)
        self.statemgr = statemgr
        self.home = home
        self.name = name
        self.options = options
        self.plan = topology_from_proto(topology)
        self.topology_id = topology.id
        self.containers = [c.id for c in packing.containers]
        conf = TopologyConfig.read(self.plan.config, name)
        self.backoff = conf.restart_backoff_secs
        self.orphan_secs = conf.scheduler_orphan_secs
        self.workdir = home.workdir(name)
        self.sc: Any = None
        self.threads: list[threading.Thread] = []
        self.fatal: str | None = None
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._restarted: list[int] = []
        self._last_report = 0.0
        self.planned = ContainersFollower(statemgr, name)
        self._archive = ""

    # -- starting ---------------------------------------------------------------

    def _context(self) -> Any:
        from pyspark import SparkConf, SparkContext

        # The JVM first, so the conf below starts from the cluster's spark-defaults.conf.
        SparkContext._ensure_initialized()
        conf = SparkConf()
        for key, value in self.options.conf:
            conf.set(key, value)
        conf.setMaster(self.options.master)
        conf.setIfMissing("spark.app.name", f"heronbridge {self.name}")
        # A failed container is this scheduler's to restart (with back-off, anywhere).
        conf.setIfMissing("spark.task.maxFailures", "1")
        # Take the cores the containers need, not the whole cluster (standalone's default).
        cpus = int(conf.get("spark.task.cpus", "1"))
        conf.setIfMissing("spark.cores.max", str(len(self.containers) * cpus))
        if "spark.ui.showConsoleProgress" not in dict(self.options.conf):
            # PySpark's gateway is a "shell", which turns it on: it would fill the log.
            conf.set("spark.ui.showConsoleProgress", "false")
        python = os.environ.get("PYSPARK_PYTHON") or conf.get("spark.pyspark.python") \
            or sys.executable
        os.environ["PYSPARK_PYTHON"] = python  # what SparkContext gives the workers
        sc = SparkContext(conf=conf)
        sc.setLogLevel("WARN")
        if conf.get("spark.authenticate", "false") != "true":
            log.warning("%s: spark.authenticate is off, so whoever reaches this driver or "
                        "the cluster's executors can read the tasks, which carry the "
                        "topology's ZooKeeper identity; turn on spark.authenticate and "
                        "spark.network.crypto.enabled (spark-defaults.conf)", where(self.name))
        return sc

    def start(self) -> None:
        self.statemgr.put(SCHEDULERS, self.name, plans_pb2.SchedulerLocation(
            topology_name=self.name, pid=os.getpid(), working_dir=str(self.workdir),
            host=socket.gethostname()))
        package = build(self.plan, self.topology_id, self.workdir, self.workdir / PACKAGE)
        self.sc = self._context()
        archive = self._archive = f"heronbridge-{self.topology_id}"
        self.sc.addArchive(f"{package}#{archive}")
        self._last_report = time.monotonic()
        log.info("%s: %d containers on %s (application %s)", where(self.name),
                 len(self.containers), self.options.master, self.sc.applicationId)
        for container in self.containers:
            self._add_container(container, start=False)
        for thread in self.threads:
            thread.start()

    def _add_container(self, container: int, start: bool = True) -> None:
        from pyspark import InheritableThread

        task = ContainerTask(self.name, self.topology_id, container, self.statemgr.uri,
                             self._archive, self.statemgr.child_env())
        thread = InheritableThread(target=self._keep_running, args=(task,),
                                   name=f"container-{container}", daemon=True)
        self.threads.append(thread)
        if start:
            thread.start()

    def _group(self, container: int) -> str:
        return f"heronbridge-{self.topology_id}-container-{container}"

    def _keep_running(self, task: ContainerTask) -> None:
        """One container's job, submitted again whenever it ends, until stopped."""
        sc, container = self.sc, task.container
        sc.setJobGroup(self._group(container), f"heronbridge {self.name}: container "
                       f"{container}", interruptOnCancel=True)
        backoff = Backoff(self.backoff)
        while not self._stopping.is_set() and container in self.containers:
            began = time.monotonic()
            try:
                outcome: Outcome = sc.parallelize([container], 1).mapPartitions(
                    partition(task)).collect()[0]
                what = (f"exited with code {outcome.code} on {outcome.host} (its logs: "
                        f"{outcome.workdir}/ there)")
            except Exception as exc:  # noqa: BLE001 - any failure of the job: start it again
                if self._stopping.is_set():
                    return
                if ENVIRONMENT_FAILED in str(exc):  # the same again on any worker
                    self.fatal = (f"container {container} could not install the topology's "
                                  f"virtualenv: {_reason(exc)}")
                    return
                if self._ended():
                    self.fatal = (f"its Spark application on {self.options.master} ended "
                                  "(its master unreachable, or the application killed: the "
                                  f"driver's log says why); last: {_reason(exc)}")
                    return
                what = f"failed: {_reason(exc)}"
            if self._stopping.is_set() or container not in self.containers \
                    or not still_submitted(self.statemgr, self.name, self.topology_id):
                return  # stopped, killed, or dropped by an update (its executor stopped)
            lived = time.monotonic() - began
            delay = backoff.after_exit(lived)
            log.warning("%s: container %d %s after %.1fs; starting it again in %.1fs%s",
                        where(self.name), container, what, lived, delay, backoff.why())
            with self._lock:
                self._restarted.append(container)
            self._stopping.wait(delay)

    def _ended(self) -> bool:
        sc = self.sc
        return sc is None or sc._jsc is None or sc._jsc.sc().isStopped()

    # -- running ------------------------------------------------------------------

    def waiting(self) -> list[int]:
        """Containers whose job has no running task (waiting for a free core)."""
        tracker = self.sc.statusTracker()
        out = []
        for container in self.containers:
            active = 0
            for job in tracker.getJobIdsForGroup(self._group(container)):
                info = tracker.getJobInfo(job)
                if info is None or info.status != "RUNNING":
                    continue
                for stage in info.stageIds:
                    stage_info = tracker.getStageInfo(stage)
                    active += stage_info.numActiveTasks if stage_info is not None else 0
            if not active:
                out.append(container)
        return out

    def check(self) -> list[int]:
        """Containers restarted since the last call; raises once the Spark application
        has ended (nothing can run any more)."""
        if self.fatal is not None:
            msg = f"{where(self.name)}: {self.fatal}"
            raise SchedulerError(msg)
        now = time.monotonic()
        if now - self._last_report > WAITING_REPORT_SECS:
            self._last_report = now
            waiting = self.waiting()
            if waiting:
                log.warning("%s: containers %s wait for a free core on %s (each takes "
                            "spark.task.cpus; the application may take spark.cores.max)",
                            where(self.name), waiting, self.options.master)
        with self._lock:
            restarted, self._restarted = self._restarted, []
        wanted = self.planned.containers
        if wanted is not None and wanted != set(self.containers) and self.sc is not None:
            # An update added or dropped containers: a dropped one's executor stops by
            # itself and its job is not submitted again; an added one gets its job (it
            # needs a free core: spark.cores.max counts the containers at start).
            self.containers[:] = [c for c in self.containers if c in wanted]
            for container in sorted(wanted - set(self.containers)):
                log.info("%s: container %d joined the packing plan; starting it",
                         where(self.name), container)
                self.containers.append(container)
                self._add_container(container)
                restarted.append(container)
        return restarted

    def stop(self) -> None:
        """Stop every container (each stops in order once its topology's node is gone;
        at once, by cancelling its job, when the state cannot be told), cancel what is
        left of their jobs, clear the state, end the application."""
        if self._stopping.is_set():
            return
        self._stopping.set()
        self.planned.cancel()
        told = True
        try:
            with self.statemgr.hurry(STATE_AT_STOP_SECS):
                self.statemgr.delete(TOPOLOGIES, self.name)
        except StateManagerError as exc:
            told = False
            log.error("%s: cannot tell its containers to stop through the state; cancelling "
                      "their Spark jobs: %s", where(self.name), exc)
        if told:
            deadline = time.monotonic() + STOP_GRACE_SECS
            for thread in self.threads:
                thread.join(max(0.0, deadline - time.monotonic()))
        if not self._ended():
            for container in self.containers:
                self.sc.cancelJobGroup(self._group(container))
            deadline = time.monotonic() + CANCEL_GRACE_SECS
            for thread in self.threads:
                thread.join(max(0.0, deadline - time.monotonic()))
        try:
            clear_at_stop(self.statemgr, self.name)
        finally:
            if self.sc is not None:
                self.sc.stop()  # also once the application ended: it frees the driver's JVM
                self.sc = None

    def kill_now(self) -> None:
        """The driver's JVM (the application with it, and so its executors): it would
        end once this process has gone, as its stdin closes; this makes sure."""
        from pyspark import SparkContext

        proc = getattr(SparkContext._gateway, "proc", None)
        if proc is not None:
            proc.kill()


def main(argv: list[str] | None = None) -> int:
    """A detached Spark scheduler (what `heronbridge submit --scheduler spark` leaves
    running): the topology's Spark driver."""
    from .lifecycle import detached_main

    def arguments(parser: Any) -> None:
        parser.add_argument("--spark-master", required=True)
        parser.add_argument("--spark-conf", action="append", metavar="KEY=VALUE")

    return detached_main(
        "heronbridge-spark-scheduler", argv,
        lambda statemgr, home, args: SparkSupervisor(
            statemgr, home, args.topology,
            SparkOptions(args.spark_master, parse_conf(args.spark_conf))), arguments)


if __name__ == "__main__":
    sys.exit(main())
