"""The local scheduler: a topology's containers as process trees on this host.

`submit_plan` publishes the topology, its packing plan and execution state; a
`Supervisor` then starts one executor per container, restarts an executor that dies,
and on stop terminates every container and removes the topology's state.
"""

from __future__ import annotations

import getpass
import logging
import os
import shutil
import signal
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from ..config import TopologyConfig
from ..errors import SchedulerError, where
from ..plan.codec import packing_to_proto, topology_to_proto
from ..plan.logical import LogicalPlan
from ..plan.packing import round_robin
from ..procfs import pid_alive
from ..proto import plans_pb2, topology_pb2
from ..state import (
    EXECUTION_STATE,
    PACKING_PLANS,
    SCHEDULERS,
    TOPOLOGIES,
    StateManager,
)
from .processes import die_with_parent, module_command

log = logging.getLogger("heronbridge.runtime.scheduler")

STOP_GRACE_SECS = 20.0


def default_home() -> Path:
    return Path(os.environ.get("HERONBRIDGE_HOME", Path.home() / ".heronbridge"))


@dataclass(frozen=True)
class Home:
    """Where topologies keep their state and working directories."""

    root: Path

    @property
    def state_uri(self) -> str:
        return str(self.root / "state")

    def workdir(self, topology: str) -> Path:
        return self.root / "topologies" / topology / "current"


def running_scheduler(state: StateManager, name: str) -> plans_pb2.SchedulerLocation | None:
    location = state.get(SCHEDULERS, name)
    if location is not None and pid_alive(location.pid):
        return location
    return None


def submit_plan(state: StateManager, home: Home, plan: LogicalPlan,
                initial_state: int = topology_pb2.RUNNING) -> str:
    """Validate and publish a topology; returns its id. Starts no process."""
    plan.validate()
    conf = TopologyConfig.read(plan.config, plan.name)
    if running_scheduler(state, plan.name) is not None:
        msg = (f"{where(plan.name)}: already running on this machine; "
               f"kill it first (heronbridge kill {plan.name})")
        raise SchedulerError(msg)
    state.clear(plan.name)
    topology_id = f"{plan.name}-{uuid.uuid4().hex[:12]}"
    packing = round_robin(plan, conf.containers)
    state.put(TOPOLOGIES, plan.name, topology_to_proto(plan, topology_id, initial_state))
    state.put(PACKING_PLANS, plan.name, packing_to_proto(packing))
    state.put(EXECUTION_STATE, plan.name, plans_pb2.ExecutionState(
        topology_name=plan.name, topology_id=topology_id, submission_time=int(time.time()),
        submission_user=getpass.getuser(), cluster="local", environ="default"))
    workdir = home.workdir(plan.name)
    if workdir.exists():
        previous = workdir.parent / "previous"
        shutil.rmtree(previous, ignore_errors=True)
        workdir.rename(previous)
    workdir.mkdir(parents=True)
    return topology_id


class Supervisor:
    """Runs a submitted topology's executors; `stop()` ends them and clears the state."""

    def __init__(self, state: StateManager, home: Home, name: str) -> None:
        self.state = state
        self.home = home
        self.name = name
        packing = state.get(PACKING_PLANS, name)
        if packing is None:
            msg = f"{where(name)}: not submitted (no packing plan in {home.state_uri})"
            raise SchedulerError(msg)
        self.containers = [c.id for c in packing.containers]
        self.workdir = home.workdir(name)
        self.executors: dict[int, subprocess.Popen] = {}

    def start(self) -> None:
        self.state.put(SCHEDULERS, self.name, plans_pb2.SchedulerLocation(
            topology_name=self.name, pid=os.getpid(), working_dir=str(self.workdir)))
        for container in self.containers:
            self._spawn(container)

    def _spawn(self, container: int) -> None:
        cdir = self.workdir / f"container-{container}"
        cdir.mkdir(parents=True, exist_ok=True)
        with (cdir / "executor.log").open("ab") as out:
            # Its own session: Ctrl-C in a terminal reaches only us, and we stop it in order.
            self.executors[container] = subprocess.Popen(
                module_command("scheduler.executor", "--state", self.home.state_uri,
                               "--topology", self.name, "--container", str(container),
                               "--workdir", str(cdir)),
                stdin=subprocess.DEVNULL, stdout=out, stderr=out, cwd=cdir,
                start_new_session=True, preexec_fn=die_with_parent())

    def check(self) -> list[int]:
        """Restart executors that died; returns the containers restarted."""
        restarted = []
        for container, proc in list(self.executors.items()):
            if proc.poll() is not None:
                log.warning("%s: executor of container %d exited with %s; restarting",
                            where(self.name), container, proc.returncode)
                self._spawn(container)
                restarted.append(container)
        return restarted

    def stop(self) -> None:
        for proc in self.executors.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_SECS
        for proc in self.executors.values():
            try:
                proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                log.warning("%s: executor pid %d did not stop; killing its container",
                            where(self.name), proc.pid)
        for proc in self.executors.values():
            # The whole process group: the executor and everything it started.
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            proc.wait()
        self.state.clear(self.name)


def main(argv: list[str] | None = None) -> int:
    """A detached supervisor (what `heronbridge submit` leaves running)."""
    import argparse

    parser = argparse.ArgumentParser(prog="heronbridge-scheduler")
    parser.add_argument("--home", required=True)
    parser.add_argument("--topology", required=True)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    from ..state import open_state

    home = Home(Path(args.home))
    supervisor = Supervisor(open_state(home.state_uri), home, args.topology)
    stopping = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stopping.append(True))
    supervisor.start()
    while not stopping:
        time.sleep(0.2)
        supervisor.check()
    supervisor.stop()
    return 0
