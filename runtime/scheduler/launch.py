"""The one way to start a topology from its plan: publish it, install its files, start its
containers (supervised by this process, or by a detached scheduler process) and wait
until every task has registered with the topology master."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from .. import control
from ..errors import RuntimeKernelError
from ..plan.logical import LogicalPlan
from ..proto import topology_pb2
from ..state import PACKING_PLANS, StateManager
from .local import Home, Supervisor, submit_plan
from .processes import module_command

START_TIMEOUT_SECS = 60.0


class Launch:
    """A submitted topology; `start()` runs it, `stop()` (or leaving a `with`) ends it and
    clears its state. Detached, it keeps running after this process exits."""

    def __init__(self, plan: LogicalPlan, home: Home, state: StateManager | None = None,
                 install: Callable[[Path], object] | None = None,
                 initial_state: int = topology_pb2.RUNNING, detached: bool = False,
                 hosts: dict[int, str] | None = None) -> None:
        self.plan = plan
        self.name = plan.name
        self.home = home
        self.hosts = hosts
        self.state = state if state is not None else home.open_state()
        self.topology_id = submit_plan(self.state, home, plan, initial_state)
        self.workdir = home.workdir(plan.name)
        self.containers = len(self.state.get(PACKING_PLANS, plan.name).containers)
        if install is not None:
            try:
                install(self.workdir / "resources")
            except BaseException:
                self.state.clear(plan.name)  # nothing half-submitted stays behind
                raise
        self.detached = detached
        self.supervisor: Supervisor | None = None
        self.process: subprocess.Popen | None = None

    def start(self, timeout: float = START_TIMEOUT_SECS,
              keep_waiting: Callable[[], bool] = lambda: True) -> float:
        """Start the containers; wait until every task has registered (or `keep_waiting`
        says stop). Returns the seconds that took. On failure nothing is left running."""
        began = time.monotonic()
        if self.detached:
            with (self.workdir / "scheduler.log").open("ab") as log:
                self.process = subprocess.Popen(
                    module_command("scheduler", "--home", str(self.home.root),
                                   "--state", self.state.uri, "--topology", self.name),
                    stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True,
                    cwd=self.workdir, env={**os.environ, **self.state.child_env()})
            alive = lambda: keep_waiting() and self.process.poll() is None  # noqa: E731
        else:
            self.supervisor = Supervisor(self.state, self.home, self.name, self.hosts)
            self.supervisor.start()
            alive = keep_waiting
        try:
            control.wait_running(self.state, self.name, timeout, alive)
        except BaseException:
            self.stop()
            raise
        return time.monotonic() - began

    def check(self) -> list[int]:
        """Restart containers that died; returns those restarted."""
        return self.supervisor.check() if self.supervisor is not None else []

    def metrics(self, timeout: float = 5.0) -> dict[str, dict[str, float]]:
        """Per-component counter totals from the topology master."""
        totals: dict[str, dict[str, float]] = {}
        for task in control.metrics(self.state, self.name, timeout).tasks:
            component = totals.setdefault(task.component, {})
            for name, value in task.counters.items():
                component[name] = component.get(name, 0) + value
        return totals

    def stop(self) -> None:
        """End every container and clear the topology's state (idempotent)."""
        if self.supervisor is not None:
            self.supervisor.stop()
            self.supervisor = None
        if self.process is not None:
            if self.process.poll() is None:
                self.process.terminate()
                try:
                    self.process.wait(60)
                except subprocess.TimeoutExpired as exc:
                    msg = f"topology {self.name!r}: its scheduler did not stop within 60s"
                    raise RuntimeKernelError(msg) from exc
            self.process = None

    def __enter__(self) -> Launch:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
