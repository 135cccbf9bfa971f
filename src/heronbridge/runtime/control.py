"""The topology master's client, the one way to talk to a running topology's master:
activate, deactivate, metrics, update (a new parallelism) and restart a task."""

from __future__ import annotations

import socket
import ssl
import time
from collections.abc import Callable, Mapping

from .addresses import MASTER
from .config import TopologyConfig
from .errors import SchedulerError, where
from .plan.codec import topology_from_proto
from .plan.rescale import UpdateError
from .proto import control_pb2, plans_pb2, topology_pb2
from .statemgr import TMASTERS, TOPOLOGIES, StateManager
from .wire import auth, tls
from .wire.frames import CONTROL, FrameAssembler, control_frame, parse_control

UPDATE_TIMEOUT_SECS = 180.0


def ask_master(statemgr: StateManager, name: str, request: control_pb2.ControllerRequest,
               timeout: float = 5.0) -> control_pb2.ControllerResponse:
    location = statemgr.get(TMASTERS, name)
    if location is None:
        msg = f"{where(name)}: no topology master is running (is the topology submitted?)"
        raise SchedulerError(msg)
    secret = statemgr.get_secret(name)
    topology = statemgr.get(TOPOLOGIES, name)
    if secret is None or topology is None:
        msg = f"{where(name)}: no secret or topology in the state manager ({statemgr.uri})"
        raise SchedulerError(msg)
    _, tls_dial = tls.contexts(TopologyConfig.read(topology_from_proto(topology).config,
                                                   name).tls, name)
    request.topology_name = name
    deadline = time.monotonic() + timeout
    expect = auth.Identity.tcp(topology.id, MASTER, location.host, location.server_port)
    try:
        with _connect(location, timeout, tls_dial) as sock:
            session = auth.dial_sync(sock, secret, auth.CLI, expect, timeout)
            frame = control_frame(request)  # sealed on TCP (the master's is)
            sock.sendall(session.sealer.seal_bytes(frame) if session.sealer else frame)
            assembler = session.assembler or FrameAssembler()
            while time.monotonic() < deadline:
                chunk = sock.recv(1 << 16)
                if not chunk:
                    break
                data, found = assembler.feed(chunk)
                for kind, _dest, start, end in found:
                    if kind == CONTROL:
                        reply = parse_control(memoryview(data)[start:end])
                        if isinstance(reply, control_pb2.ControllerResponse):
                            return reply
    except (OSError, auth.AuthError) as exc:
        msg = (f"{where(name)}: cannot reach its topology master at "
               f"{location.host}:{location.server_port}: {exc}")
        raise SchedulerError(msg) from exc
    msg = f"{where(name)}: the topology master did not answer within {timeout}s"
    raise SchedulerError(msg)


def _connect(location: plans_pb2.TopologyMasterLocation, timeout: float,
             context: ssl.SSLContext | None) -> socket.socket:
    sock = socket.create_connection((location.host, location.server_port), timeout)
    if context is None:
        return sock
    try:
        return context.wrap_socket(sock)
    except BaseException:
        sock.close()
        raise


def set_state(statemgr: StateManager, name: str, running: bool) -> int:
    target = topology_pb2.RUNNING if running else topology_pb2.PAUSED
    reply = ask_master(statemgr, name, control_pb2.ControllerRequest(set_state=target))
    if not reply.status.ok:
        msg = f"{where(name)}: {reply.status.message}"
        raise SchedulerError(msg)
    return reply.state


def metrics(statemgr: StateManager, name: str, timeout: float = 5.0) -> control_pb2.MetricsReport:
    reply = ask_master(statemgr, name, control_pb2.ControllerRequest(
        metrics=control_pb2.MetricsQuery()), timeout)
    return reply.metrics


def wait_running(statemgr: StateManager, name: str, timeout: float = 60.0,
                 alive: Callable[[], bool] = lambda: True,
                 watch: Callable[[control_pb2.MetricsReport], None] | None = None) -> None:
    """Wait until the topology master reports that every task has registered. `watch`
    sees each report on the way (it may raise to stop waiting)."""
    deadline = time.monotonic() + timeout
    report = None
    while time.monotonic() < deadline:
        if not alive():
            msg = f"{where(name)}: its scheduler exited during start-up"
            raise SchedulerError(msg)
        try:
            report = metrics(statemgr, name, timeout=1.0)
        except SchedulerError:
            report = None
        if report is not None:
            if watch is not None:
                watch(report)
            if report.all_ready:
                return
        time.sleep(0.05)
    msg = f"{where(name)}: not every task registered within {timeout:.0f}s"
    raise SchedulerError(msg)


def parse_parallelism(items: list[str], topology: str | None = None) -> dict[str, int]:
    """`["count:4", "split:2"]` -> {"count": 4, "split": 2}."""
    out: dict[str, int] = {}
    for item in items:
        for part in item.split(","):
            name, sep, value = part.strip().rpartition(":")
            try:
                n = int(value)
            except ValueError:
                n = None
            if not sep or not name or n is None:
                msg = (f"{where(topology)}: expected COMPONENT:N (N an integer), received "
                       f"{part!r}")
                raise UpdateError(msg)
            out[name] = n
    return out


def update(statemgr: StateManager, name: str, parallelism: Mapping[str, int],
           containers: int | None = None, dry_run: bool = False, reason: str = "",
           timeout: float = UPDATE_TIMEOUT_SECS) -> control_pb2.UpdateReport:
    """Apply (or with `dry_run`, only plan) a new parallelism; returns what changed and
    how long the spouts were paused. UpdateError names what the master refused."""
    request = control_pb2.ControllerRequest(update=control_pb2.UpdateRequest(
        parallelism=dict(parallelism), containers=containers or 0, dry_run=dry_run,
        reason=reason))
    reply = ask_master(statemgr, name, request, timeout)
    if not reply.status.ok:
        raise UpdateError(reply.status.message)
    return reply.update


def restart_task(statemgr: StateManager, name: str, task: int, reason: str) -> None:
    """End one task of a running topology; its executor starts it again."""
    reply = ask_master(statemgr, name, control_pb2.ControllerRequest(
        restart=control_pb2.RestartTask(task_id=task, reason=reason)))
    if not reply.status.ok:
        raise UpdateError(reply.status.message)


def set_log_level(statemgr: StateManager, name: str, component: str, level: str,
                  timeout_secs: int = 0, logger: str = "") -> None:
    """A logger's level in a component's tasks (every task's if `component` is empty)
    until `timeout_secs` (0: until changed again); an empty level puts the one before back."""
    reply = ask_master(statemgr, name, control_pb2.ControllerRequest(
        log_level=control_pb2.LogLevel(component=component, logger=logger, level=level,
                                       timeout_secs=timeout_secs)))
    if not reply.status.ok:
        raise SchedulerError(reply.status.message)


def set_sampling(statemgr: StateManager, name: str, component: str, percent: float) -> None:
    """Sample `percent` of a component's (every component's if empty) emitted tuples."""
    reply = ask_master(statemgr, name, control_pb2.ControllerRequest(
        sampling=control_pb2.Sampling(component=component, percent=percent)))
    if not reply.status.ok:
        raise SchedulerError(reply.status.message)
