"""Talking to a running topology's master: activate, deactivate, metrics."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable

from .errors import SchedulerError, where
from .proto import control_pb2, topology_pb2
from .state import TMASTERS, StateManager
from .wire.frames import CONTROL, FrameAssembler, control_frame, parse_control


def ask_master(state: StateManager, name: str, request: control_pb2.ControllerRequest,
               timeout: float = 5.0) -> control_pb2.ControllerResponse:
    location = state.get(TMASTERS, name)
    if location is None:
        msg = f"{where(name)}: no topology master is running (is the topology submitted?)"
        raise SchedulerError(msg)
    request.topology_name = name
    deadline = time.monotonic() + timeout
    try:
        with socket.create_connection((location.host, location.server_port), timeout) as sock:
            sock.sendall(control_frame(request))
            assembler = FrameAssembler()
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
    except OSError as exc:
        msg = (f"{where(name)}: cannot reach its topology master at "
               f"{location.host}:{location.server_port}: {exc}")
        raise SchedulerError(msg) from exc
    msg = f"{where(name)}: the topology master did not answer within {timeout}s"
    raise SchedulerError(msg)


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
                 alive: Callable[[], bool] = lambda: True) -> None:
    """Wait until the topology master reports that every task has registered."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive():
            msg = f"{where(name)}: its scheduler exited during start-up"
            raise SchedulerError(msg)
        try:
            if metrics(state, name, timeout=1.0).all_ready:
                return
        except SchedulerError:
            pass
        time.sleep(0.05)
    msg = f"{where(name)}: not every task registered within {timeout:.0f}s; see its logs"
    raise SchedulerError(msg)
