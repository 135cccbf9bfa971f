"""The one way to start a topology from its plan: publish it, install its files, start its
containers (supervised by this process, or by a detached scheduler process; on this
host, or on a Spark cluster) and wait until every task has registered with the topology
master."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import control, failures
from ..errors import RuntimeKernelError, SchedulerError, where
from ..plan.logical import LogicalPlan
from ..plan.tasks import TaskLayout
from ..proto import topology_pb2
from ..statemgr import PACKING_PLANS, StateManager
from .home import Home
from .jvm import needs_jvm
from .lifecycle import SHUTDOWN_GRACE_SECS, KillWatch
from .local import Supervisor, submit_plan
from .processes import module_command
from .spark import START_TIMEOUT_SECS as SPARK_START_TIMEOUT_SECS
from .spark import SparkOptions, SparkSupervisor, require_spark

START_TIMEOUT_SECS = 60.0
# With Java tasks: each is a JVM, and six of them starting at once on a loaded 2-core
# machine took over 60 s to register.
JVM_START_TIMEOUT_SECS = 180.0
LOG_TAIL_LINES = 15


class Launch:
    """A submitted topology; `start()` runs it, `stop()` (or leaving a `with`) ends it and
    clears its state. Detached, it keeps running after this process exits."""

    def __init__(self, plan: LogicalPlan, home: Home, statemgr: StateManager | None = None,
                 install: Callable[[Path], object] | None = None,
                 initial_state: int = topology_pb2.RUNNING, detached: bool = False,
                 hosts: dict[int, str] | None = None, spark: SparkOptions | None = None) -> None:
        self.plan = plan
        self.name = plan.name
        self.home = home
        self.hosts = hosts
        self.spark = spark  # None: the local scheduler
        self.statemgr = statemgr if statemgr is not None else home.open_statemgr()
        if spark is not None:
            require_spark(self.statemgr, plan.name)
        self.topology_id = submit_plan(self.statemgr, home, plan, initial_state,
                                       "local" if spark is None else "spark")
        self.workdir = home.workdir(plan.name)
        packing = self.statemgr.get(PACKING_PLANS, plan.name)
        if packing is None:
            msg = f"{where(plan.name)}: no packing plan in the state manager after its submit"
            raise SchedulerError(msg)
        self.containers = len(packing.containers)
        if install is not None:
            try:
                install(self.workdir / "resources")
            except BaseException:
                self.statemgr.clear(plan.name)  # nothing half-submitted stays behind
                raise
        self.detached = detached
        self.supervisor: Supervisor | SparkSupervisor | None = None
        self.process: subprocess.Popen | None = None
        self.killed: KillWatch | None = None
        # Where the tasks' copies of the user's files came from: {copy folder: source}.
        self.sources: dict[str, str] = {}
        self.last_report: Any = None  # the master's latest metrics report seen

    def start(self, timeout: float | None = None,
              keep_waiting: Callable[[], bool] = lambda: True,
              on_report: Callable[[Any], None] | None = None) -> float:
        """Start the containers; wait until every task has registered (or `keep_waiting`
        says stop); by default up to 60s, 180s with Java tasks, 240s on Spark. Returns the
        seconds that took.
        `on_report` sees each metrics report meanwhile (the exceptions tasks died of).
        A task that keeps dying before it starts ends the wait at once, with what it
        raised. On failure nothing is left running."""
        if timeout is None:
            timeout = SPARK_START_TIMEOUT_SECS if self.spark is not None else \
                JVM_START_TIMEOUT_SECS if needs_jvm(self.plan) else START_TIMEOUT_SECS
        began = time.monotonic()
        if self.detached:
            module, extra = ("scheduler", []) if self.spark is None else (
                "scheduler.spark", self.spark.argv())
            with self.scheduler_log.open("ab") as log:
                self.process = subprocess.Popen(
                    module_command(module, "--home", str(self.home.root), "--state",
                                   self.statemgr.uri, "--topology", self.name, *extra),
                    stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True,
                    cwd=self.workdir, env={**os.environ, **self.statemgr.child_env()})
            alive = lambda: keep_waiting() and self.process.poll() is None  # noqa: E731
        else:
            self.killed = KillWatch(self.statemgr, self.name)
            self.supervisor = Supervisor(self.statemgr, self.home, self.name, self.hosts) \
                if self.spark is None else \
                SparkSupervisor(self.statemgr, self.home, self.name, self.spark)
            alive = keep_waiting
        try:
            if self.supervisor is not None:
                self.supervisor.start()
            control.wait_running(self.statemgr, self.name, timeout,
                                 lambda: alive() and not self.check_fatal(),
                                 lambda report: self._starting(report, on_report))
        except SchedulerError as exc:
            detail = "\n".join(d for d in (self._not_started(str(exc)), self._failure_detail())
                               if d)
            self.stop()
            if detail:
                msg = f"{exc}\n{detail}"
                raise SchedulerError(msg) from exc
            raise
        except BaseException:
            self.stop()
            raise
        return time.monotonic() - began

    def _starting(self, report: Any, on_report: Callable[[Any], None] | None) -> None:
        self.last_report = report
        if on_report is not None:
            on_report(report)
        self.refuse_start_failure(report)

    def refuse_start_failure(self, report: Any,
                             deaths: int = failures.START_RESTARTS) -> None:
        """Raise when a task keeps dying (`deaths` times) before its component ever
        started: while the topology starts, and after it (a multilang spout's subprocess is
        up only once it answers its first command, which comes when every task has
        started)."""
        failure = failures.start_failure(self.name, report, deaths)
        if failure is not None:
            times = max(failure.restarts, failure.crashes)
            msg = (f"{failure.where}: died {times} time{'s' if times != 1 else ''} before "
                   f"it started; "
                   f"{failure.exception}{failure.at(self.source_of)}; its log: "
                   f"{self.task_log(failure.container, failure.component, failure.task)}")
            raise SchedulerError(msg)

    def _not_started(self, said: str) -> str:
        """Which tasks had not started when the wait ended, and what they raised (where
        `said` does not say it already)."""
        report = self.last_report
        if report is None:
            return ""
        up = failures.started(report)
        waiting: dict[str, list[int]] = {}
        for task, component in sorted(TaskLayout.of(self.plan).task_component.items()):
            if component in self.plan.components and (component, task) not in up:
                waiting.setdefault(component, []).append(task)
        if not waiting:
            return ""
        lines = ["tasks not started: " + "; ".join(
            f"component {c!r} (task{'s' if len(t) > 1 else ''} {', '.join(map(str, t))})"
            for c, t in waiting.items())]
        for failure in failures.task_failures(self.name, report):
            if failure.task in waiting.get(failure.component, ()) and failure.where not in said:
                lines.append(f"{where(component=failure.component, task=failure.task)}: "
                             f"{failure.exception}{failure.at(self.source_of)}; its log: "
                             f"{self.task_log(failure.container, failure.component, failure.task)}")
        return "\n".join(lines)

    def source_of(self, path: str) -> str:
        """The user's own file of a task's copy (a project's src/ for its resources/)."""
        for copy, source in self.sources.items():
            if path.startswith(copy.rstrip("/") + "/"):
                return source.rstrip("/") + path[len(copy.rstrip("/")):]
        return path

    def task_log(self, container: int, component: str, task: int) -> str:
        """Where a task's log is."""
        if self.spark is not None:
            return (f"heronbridge/{self.name}/container-{container}/logs/task-{task}-"
                    f"{component}.log in the Spark worker's executor folder")
        return str(self.workdir / f"container-{container}" / "logs" /
                   f"task-{task}-{component}.log")

    @property
    def scheduler_log(self) -> Path:
        return self.workdir / "scheduler.log"

    def _failure_detail(self) -> str:
        """What the scheduler said last: a detached one's log tail, or why a supervised
        Spark application ended."""
        if isinstance(self.supervisor, SparkSupervisor) and self.supervisor.fatal is not None:
            return self.supervisor.fatal
        if not self.detached or not self.scheduler_log.is_file():
            return ""
        lines = self.scheduler_log.read_text(errors="replace").splitlines()
        return f"the end of {self.scheduler_log}:\n" + "\n".join(lines[-LOG_TAIL_LINES:])

    def check_fatal(self) -> bool:
        """Whether the scheduler supervised here can no longer run the topology."""
        return isinstance(self.supervisor, SparkSupervisor) and self.supervisor.fatal is not None

    def check(self) -> list[int]:
        """Restart containers that died; returns those restarted."""
        return self.supervisor.check() if self.supervisor is not None else []

    def was_killed(self) -> bool:
        """Whether the topology was killed through the state (`heronbridge kill`, from
        any host) while this process supervises it."""
        return self.killed is not None and self.killed.is_set()

    def metrics(self, timeout: float = 5.0) -> dict[str, dict[str, float]]:
        """Per-component counter totals from the topology master."""
        totals: dict[str, dict[str, float]] = {}
        for task in control.metrics(self.statemgr, self.name, timeout).tasks:
            component = totals.setdefault(task.component, {})
            for name, value in task.counters.items():
                component[name] = component.get(name, 0) + value
        return totals

    def stop(self) -> None:
        """End every container and clear the topology's state (idempotent)."""
        if self.killed is not None:
            self.killed.cancel()
            self.killed = None
        if self.supervisor is not None:
            self.supervisor.stop()
            self.supervisor = None
        if self.process is not None:
            if self.process.poll() is None:
                self.process.terminate()
                # Its grace, and its watchdog's moment to notice the grace is over.
                wait = SHUTDOWN_GRACE_SECS + 5
                try:
                    self.process.wait(wait)
                except subprocess.TimeoutExpired as exc:
                    msg = (f"topology {self.name!r}: its scheduler (pid {self.process.pid}) "
                           f"did not stop within {wait:g}s of SIGTERM")
                    raise RuntimeKernelError(msg) from exc
            self.process = None

    def __enter__(self) -> Launch:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
