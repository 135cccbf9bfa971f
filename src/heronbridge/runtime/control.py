"""Talking to a running topology's master: activate, deactivate, metrics."""

from __future__ import annotations

import socket
import ssl
import time
from collections.abc import Callable
from typing import Any

from .addresses import MASTER
from .config import TopologyConfig
from .errors import SchedulerError, where
from .plan.codec import topology_from_proto
from .proto import control_pb2, topology_pb2
from .state import TMASTERS, TOPOLOGIES, StateManager
from .wire import auth, tls
from .wire.frames import CONTROL, control_frame, parse_control


def ask_master(state: StateManager, name: str, request: control_pb2.ControllerRequest,
               timeout: float = 5.0) -> control_pb2.ControllerResponse:
    location = state.get(TMASTERS, name)
    if location is None:
        msg = f"{where(name)}: no topology master is running (is the topology submitted?)"
        raise SchedulerError(msg)
    secret = state.get_secret(name)
    topology = state.get(TOPOLOGIES, name)
    if secret is None or topology is None:
        msg = f"{where(name)}: no secret or topology in the state manager ({state.uri})"
        raise SchedulerError(msg)
    _, tls_dial = tls.contexts(TopologyConfig.read(topology_from_proto(topology).config,
                                                   name).tls, name)
    request.topology_name = name
    deadline = time.monotonic() + timeout
    expect = auth.Identity.tcp(topology.id, MASTER, location.host, location.server_port)
    try:
        with _connect(location, timeout, tls_dial) as sock:
            session = auth.dial_sync(sock, secret, auth.CLI, expect, timeout)
            sock.sendall(session.sealer.seal_bytes(control_frame(request)))
            assembler = session.assembler
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


def _connect(location: Any, timeout: float, context: ssl.SSLContext | None) -> socket.socket:
    sock = socket.create_connection((location.host, location.server_port), timeout)
    if context is None:
        return sock
    try:
        return context.wrap_socket(sock)
    except BaseException:
        sock.close()
        raise


def set_state(state: StateManager, name: str, running: bool) -> int:
    target = topology_pb2.RUNNING if running else topology_pb2.PAUSED
    reply = ask_master(state, name, control_pb2.ControllerRequest(set_state=target))
    if not reply.status.ok:
        msg = f"{where(name)}: {reply.status.message}"
        raise SchedulerError(msg)
    return reply.state


def metrics(state: StateManager, name: str, timeout: float = 5.0) -> control_pb2.MetricsReport:
    reply = ask_master(state, name, control_pb2.ControllerRequest(
        metrics=control_pb2.MetricsQuery()), timeout)
    return reply.metrics


def wait_running(state: StateManager, name: str, timeout: float = 60.0,
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
            report = metrics(state, name, timeout=1.0)
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
