"""The runtime's one administrative API: submit, kill, activate, deactivate, update,
restart a task, describe and list topologies. Every front door (the command line, the
Nimbus service, the web UI) calls these and keeps only its own presentation; each
returns plain dataclasses (or protobuf reports the master wrote) and raises the
runtime's errors, which name the topology.

A kill goes through the state manager, so it works from any host: the topology's node
is deleted, its scheduler (wherever it runs) follows the node, stops the containers and
clears the rest; a scheduler on this host that does not follow within a while is sent
SIGTERM. Activate, deactivate, update and restart ask the topology master.
"""

from __future__ import annotations

import os
import signal
import socket
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from . import control
from .errors import SchedulerError, StateManagerError, where
from .plan.logical import LogicalPlan
from .procfs import pid_alive
from .proto import control_pb2, plans_pb2, topology_pb2
from .scheduler.home import Home
from .scheduler.launch import Launch
from .scheduler.local import running_scheduler
from .scheduler.spark import SparkOptions
from .statemgr import PACKING_PLANS, PHYSICAL_PLANS, SCHEDULERS, TOPOLOGIES, StateManager

KILL_WAIT_SECS = 60.0  # for a scheduler to follow its topology's node
KILL_SIGNAL_SECS = 15.0  # then one on this host is sent SIGTERM


@dataclass(frozen=True)
class Container:
    id: int
    host: str | None  # where its stream manager listens; None while it starts


@dataclass(frozen=True)
class TopologyStatus:
    """What the state manager says of one topology."""

    name: str
    id: str | None
    state: str  # RUNNING, PAUSED, or UNKNOWN
    alive: bool  # its scheduler is alive (else the state is stale)
    containers: tuple[Container, ...] = ()
    tasks: int = 0
    scheduler_pid: int | None = None
    scheduler_host: str | None = None
    working_dir: str | None = None
    corrupt: str | None = None  # why its nodes could not be read


@dataclass(frozen=True)
class Killed:
    name: str
    outcome: str  # "killed"; "stale": its scheduler was gone; "corrupt": unreadable state
    detail: str = ""


@dataclass(frozen=True)
class Submitted:
    name: str
    topology_id: str
    workdir: Path
    launch: Launch  # for a caller that watches it start, or stops it


# -- reading ------------------------------------------------------------------------------


def list_topologies(statemgr: StateManager) -> list[TopologyStatus]:
    """Every topology the state manager knows of (a scheduler's node counts too)."""
    names = sorted(set(statemgr.names(TOPOLOGIES)) | set(statemgr.names(SCHEDULERS)))
    return [describe(statemgr, name) for name in names]


def describe(statemgr: StateManager, name: str) -> TopologyStatus:
    """One topology; a node that cannot be read is reported, not raised, so that one bad
    node does not hide the others."""
    try:
        topology = statemgr.get(TOPOLOGIES, name)
        packing = statemgr.get(PACKING_PLANS, name)
        location = statemgr.get(SCHEDULERS, name)
        alive = running_scheduler(statemgr, name) is not None
        containers = _containers(statemgr, name, packing)
    except StateManagerError as exc:
        return TopologyStatus(name, None, "UNKNOWN", False, corrupt=str(exc))
    state = topology_pb2.TopologyState.Name(topology.state) if topology else "UNKNOWN"
    return TopologyStatus(
        name, topology.id if topology else None, state, alive, containers,
        sum(len(c.instances) for c in packing.containers) if packing else 0,
        location.pid if location else None, (location.host or None) if location else None,
        location.working_dir if location else None)


def _containers(statemgr: StateManager, name: str,
                packing: plans_pb2.PackingPlan | None) -> tuple[Container, ...]:
    if packing is None:
        return ()
    pplan = statemgr.get(PHYSICAL_PLANS, name)
    hosts = {s.container: s.host for s in pplan.stmgrs} if pplan is not None else {}
    return tuple(Container(c.id, hosts.get(c.id)) for c in packing.containers)


# -- changing -----------------------------------------------------------------------------


def submit(statemgr: StateManager, home: Home, plan: LogicalPlan,
           install: Callable[[Path], object] | None = None, running: bool = True,
           spark: SparkOptions | None = None, wait: bool = True,
           sources: dict[str, str] | None = None,
           watch: Callable[[Launch], Callable[[control_pb2.MetricsReport], None]] | None = None,
           ) -> Submitted:
    """Publish a topology and start its detached scheduler (on this host, or on a Spark
    cluster); with `wait`, return once every task has registered. `sources` maps the
    tasks' copies of the user's files to the files (errors name those); `watch(launch)`
    gives what sees each metrics report while the topology starts (Launch.start)."""
    initial = topology_pb2.RUNNING if running else topology_pb2.PAUSED
    launch = Launch(plan, home, statemgr, install, initial, detached=True, spark=spark)
    launch.sources.update(sources or {})
    if wait:
        launch.start(on_report=watch(launch) if watch is not None else None)
    return Submitted(plan.name, launch.topology_id, launch.workdir, launch)


def kill(statemgr: StateManager, name: str, wait_secs: float = KILL_WAIT_SECS) -> Killed:
    """Stop a topology and remove its state (see the module's docstring)."""
    try:
        location = running_scheduler(statemgr, name)
    except StateManagerError as exc:  # no scheduler to ask: its executors stop when the
        statemgr.clear(name)  # topology's node goes
        return Killed(name, "corrupt", str(exc))
    if location is None:
        if name not in statemgr.names(TOPOLOGIES) and name not in statemgr.names(SCHEDULERS):
            msg = f"{where(name)} is not running"
            raise SchedulerError(msg)
        statemgr.clear(name)
        return Killed(name, "stale")
    statemgr.delete(TOPOLOGIES, name)
    here = location.host in ("", socket.gethostname())

    def gone() -> bool:
        return statemgr.get(SCHEDULERS, name) is None and not (here and pid_alive(location.pid))

    if not _wait(gone, min(KILL_SIGNAL_SECS, wait_secs) if here else wait_secs) and here \
            and pid_alive(location.pid):
        os.kill(location.pid, signal.SIGTERM)  # a scheduler that does not follow it
        _wait(gone, wait_secs)
    if not gone():
        msg = (f"{where(name)}: its scheduler (pid {location.pid} on "
               f"{location.host or 'this host'}) did not stop within {wait_secs:.0f}s")
        raise SchedulerError(msg)
    statemgr.clear(name)
    return Killed(name, "killed")


def _wait(condition: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def _running(statemgr: StateManager, name: str) -> None:
    if running_scheduler(statemgr, name) is None:
        msg = f"{where(name)} is not running"
        raise SchedulerError(msg)


def activate(statemgr: StateManager, name: str) -> int:
    """Resume the spouts; returns the topology's state (topology_pb2.RUNNING)."""
    _running(statemgr, name)
    return control.set_state(statemgr, name, True)


def deactivate(statemgr: StateManager, name: str) -> int:
    """Pause the spouts; returns the topology's state (topology_pb2.PAUSED)."""
    _running(statemgr, name)
    return control.set_state(statemgr, name, False)


def update(statemgr: StateManager, name: str, parallelism: Mapping[str, int],
           containers: int | None = None, dry_run: bool = False,
           reason: str = "") -> control_pb2.UpdateReport:
    """A new parallelism (and number of containers) without a restart; with `dry_run`,
    only the plan. UpdateError names what the master refused."""
    _running(statemgr, name)
    return control.update(statemgr, name, parallelism, containers, dry_run, reason)


def restart_task(statemgr: StateManager, name: str, task: int, reason: str) -> None:
    """End one task; its executor starts it again."""
    _running(statemgr, name)
    control.restart_task(statemgr, name, task, reason)


def set_log_level(statemgr: StateManager, name: str, component: str, level: str,
                  timeout_secs: int = 0, logger: str = "") -> None:
    """Storm's setLogConfig for one component (or all, with ""): `logger`'s level (the
    root's by default) in its running tasks, back to what it was after `timeout_secs`."""
    _running(statemgr, name)
    if timeout_secs < 0:
        msg = f"{where(name, component or None)}: expected a timeout >= 0 seconds, " \
              f"received {timeout_secs}"
        raise SchedulerError(msg)
    control.set_log_level(statemgr, name, component, level, timeout_secs, logger)


def set_sampling(statemgr: StateManager, name: str, component: str, percent: float) -> None:
    """Storm UI's "Debug": sample `percent` (0 to 100; 0 stops) of a component's emitted
    tuples (every component's with ""), written beside each task's log (runtime.sampling)."""
    _running(statemgr, name)
    control.set_sampling(statemgr, name, component, percent)
