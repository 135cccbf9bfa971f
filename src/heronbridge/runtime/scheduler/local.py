"""The local scheduler: a topology's containers as process trees on this host.

`submit_plan` publishes the topology, its packing plan and execution state; a
`Supervisor` then starts one executor per container, restarts an executor that dies,
starts and stops containers as an update's packing plan adds or drops them, and on stop
terminates every container and removes the topology's state.
"""

from __future__ import annotations

import getpass
import logging
import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
import uuid

from ..addresses import HOST_ENV
from ..config import TopologyConfig
from ..errors import SchedulerError, where
from ..health.config import HealthConfig
from ..plan.codec import packing_to_proto, topology_from_proto, topology_to_proto
from ..plan.logical import LogicalPlan
from ..plan.packing import pack
from ..procfs import pid_alive
from ..proto import plans_pb2, topology_pb2
from ..statemgr import (
    CHECKPOINT_KEYS,
    EXECUTION_STATE,
    KEY_BYTES,
    PACKING_PLANS,
    SCHEDULERS,
    STATEFUL_CHECKPOINTS,
    TOPOLOGIES,
    StateManager,
)
from .home import Home
from .lifecycle import (
    ORPHAN_SECS,
    clear_at_stop,
    detached_main,
    still_submitted,
)
from .processes import die_with_parent, module_command
from .restarts import Backoff

log = logging.getLogger("heronbridge.runtime.scheduler")

STOP_GRACE_SECS = 20.0


def running_scheduler(statemgr: StateManager, name: str) -> plans_pb2.SchedulerLocation | None:
    """The scheduler of a topology if it is alive (its pid checked on its own host)."""
    location = statemgr.get(SCHEDULERS, name)
    if location is None:
        return None
    if location.host and location.host != socket.gethostname():
        return location  # elsewhere: on ZooKeeper the node lives only as long as it does
    return location if pid_alive(location.pid) else None


def submit_plan(statemgr: StateManager, home: Home, plan: LogicalPlan,
                initial_state: int = topology_pb2.RUNNING, cluster: str = "local") -> str:
    """Validate and publish a topology; returns its id. Starts no process. `cluster`:
    the scheduler that will run it (the execution state's cluster)."""
    plan.validate()
    conf = TopologyConfig.read(plan.config, plan.name)
    HealthConfig.read(plan.config, plan.name)  # refused here rather than in container 0
    if conf.serializer == "pickle":
        log.warning("%s: tuple values travel pickled (heronbridge.serializer=pickle), as "
                    "asked: tasks unpickle only what an authenticated stream manager forwards, "
                    "but whoever holds the topology's secret can run code in them; msgpack "
                    "and json cannot run code", where(plan.name))
    running = running_scheduler(statemgr, plan.name)
    if running is not None:
        on = "this machine" if running.host in ("", socket.gethostname()) else running.host
        msg = (f"{where(plan.name)}: already running on {on} (scheduler pid {running.pid}); "
               f"kill it first (heronbridge kill {plan.name})")
        raise SchedulerError(msg)
    statemgr.clear(plan.name)
    if conf.stateful and conf.start_clean:
        statemgr.delete(STATEFUL_CHECKPOINTS, plan.name)
        statemgr.delete(CHECKPOINT_KEYS, plan.name)
    topology_id = f"{plan.name}-{uuid.uuid4().hex[:12]}"
    statemgr.put_secret(plan.name, secrets.token_bytes(KEY_BYTES))  # proven by every connection
    if statemgr.get_checkpoint_key(plan.name) is None:  # kept across submits, as checkpoints
        statemgr.put_checkpoint_key(plan.name, secrets.token_bytes(KEY_BYTES))
    packing = pack(plan, conf.containers)
    statemgr.put(TOPOLOGIES, plan.name, topology_to_proto(plan, topology_id, initial_state))
    statemgr.put(PACKING_PLANS, plan.name, packing_to_proto(packing))
    statemgr.put(EXECUTION_STATE, plan.name, plans_pb2.ExecutionState(
        topology_name=plan.name, topology_id=topology_id, submission_time=int(time.time()),
        submission_user=getpass.getuser(), cluster=cluster, environ="default"))
    home.ensure()
    workdir = home.workdir(plan.name)
    if workdir.exists():
        previous = workdir.parent / "previous"
        shutil.rmtree(previous, ignore_errors=True)
        workdir.rename(previous)
    workdir.mkdir(mode=0o700, parents=True)
    return topology_id


class ContainersFollower:
    """The container ids of a topology's latest packing plan (None until it is read)."""

    def __init__(self, statemgr: StateManager, name: str) -> None:
        self.containers: set[int] | None = None
        self._watch = statemgr.watch(PACKING_PLANS, name, self._changed)

    def _changed(self, packing: plans_pb2.PackingPlan | None) -> None:
        if packing is not None:
            self.containers = {c.id for c in packing.containers}

    def cancel(self) -> None:
        self._watch.cancel()


class Supervisor:
    """Runs a submitted topology's executors; `stop()` ends them and clears the state."""

    def __init__(self, statemgr: StateManager, home: Home, name: str,
                 hosts: dict[int, str] | None = None) -> None:
        self.statemgr = statemgr
        self.hosts = hosts or {}  # container -> the address its listeners use (tests)
        self.home = home
        self.name = name
        packing = statemgr.get(PACKING_PLANS, name)
        if packing is None:
            msg = f"{where(name)}: not submitted (no packing plan in {statemgr.uri})"
            raise SchedulerError(msg)
        self.containers = [c.id for c in packing.containers]
        topology = statemgr.get(TOPOLOGIES, name)
        self.topology_id = topology.id if topology is not None else ""
        self.workdir = home.workdir(name)
        self.executors: dict[int, subprocess.Popen] = {}
        conf = TopologyConfig.read(topology_from_proto(topology).config, name) \
            if topology is not None else None
        base = conf.restart_backoff_secs if conf is not None else 0.5
        self.orphan_secs = conf.scheduler_orphan_secs if conf is not None else ORPHAN_SECS
        self.backoff = {c: Backoff(base) for c in self.containers}
        self.started: dict[int, float] = {}
        self.due: dict[int, float] = {}  # container -> when its executor starts again
        self.base_backoff = base
        self.leaving: list[subprocess.Popen] = []
        self.planned = ContainersFollower(statemgr, name)

    def start(self) -> None:
        self.statemgr.put(SCHEDULERS, self.name, plans_pb2.SchedulerLocation(
            topology_name=self.name, pid=os.getpid(), working_dir=str(self.workdir),
            host=socket.gethostname()))
        for container in self.containers:
            self._spawn(container)

    def _spawn(self, container: int) -> None:
        cdir = self.workdir / f"container-{container}"
        cdir.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, **self.statemgr.child_env()}
        if container in self.hosts:
            env[HOST_ENV] = self.hosts[container]
        self.started[container] = time.monotonic()
        with (cdir / "executor.log").open("ab") as out:
            # Its own session: Ctrl-C in a terminal reaches only us, and we stop it in order.
            self.executors[container] = subprocess.Popen(
                module_command("scheduler.executor", "--state", self.statemgr.uri,
                               "--topology", self.name, "--container", str(container),
                               "--workdir", str(cdir)),
                stdin=subprocess.DEVNULL, stdout=out, stderr=out, cwd=cdir, env=env,
                start_new_session=True, preexec_fn=die_with_parent())

    def check(self) -> list[int]:
        """Restart executors that died, each once its back-off has passed; start and stop
        the containers an update added or dropped; returns the containers (re)started."""
        restarted: list[int] = self._follow_packing()
        dead = [c for c, proc in self.executors.items() if proc.poll() is not None]
        if dead and not still_submitted(self.statemgr, self.name, self.topology_id):
            return restarted  # killed through the state: the executors stopped by themselves
        now = time.monotonic()
        for container in dead:
            if container in self.due:
                continue
            backoff = self.backoff[container]
            lived = now - self.started[container]
            delay = backoff.after_exit(lived)
            self.due[container] = now + delay
            log.warning("%s: executor of container %d exited with %s after %.1fs; restarting "
                        "in %.1fs%s", where(self.name), container,
                        self.executors[container].returncode, lived, delay, backoff.why())
        for container, due in list(self.due.items()):
            if now >= due:
                del self.due[container]
                self._spawn(container)
                restarted.append(container)
        return restarted

    def _follow_packing(self) -> list[int]:
        wanted = self.planned.containers
        if wanted is None or wanted == set(self.containers):
            return []
        for container in sorted(set(self.containers) - wanted):
            # Its executor stops by itself once it sees the plan; this makes sure.
            log.info("%s: container %d left the packing plan; stopping it", where(self.name),
                     container)
            self.containers.remove(container)
            self.due.pop(container, None)
            proc = self.executors.pop(container, None)
            if proc is not None and proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                self.leaving.append(proc)
        added = sorted(wanted - set(self.containers))
        for container in added:
            log.info("%s: container %d joined the packing plan; starting it",
                     where(self.name), container)
            self.containers.append(container)
            self.backoff[container] = Backoff(self.base_backoff)
            self._spawn(container)
        self.leaving = [p for p in self.leaving if p.poll() is None]
        return added

    def stop(self) -> None:
        self.planned.cancel()
        for proc in self.leaving:
            if proc.poll() is None:
                proc.kill()
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
        clear_at_stop(self.statemgr, self.name)

    def kill_now(self) -> None:
        for proc in [*list(self.executors.values()), *self.leaving]:
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # the executor and all it started
            except (ProcessLookupError, PermissionError):
                pass


def main(argv: list[str] | None = None) -> int:
    """A detached supervisor (what `heronbridge submit` leaves running)."""
    return detached_main("heronbridge-scheduler", argv,
                         lambda statemgr, home, args: Supervisor(statemgr, home,
                                                                  args.topology))
