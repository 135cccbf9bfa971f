"""The topology master's client, the one way to talk to a running topology's master:
activate, deactivate, metrics, update (a new parallelism) and restart a task; and a
task's profile and its log, from the stream manager on the task's host."""

from __future__ import annotations

import socket
import ssl
import threading
import time
from collections.abc import Callable, Mapping
from typing import TypeVar

from google.protobuf.message import Message

from .addresses import MASTER
from .config import TopologyConfig
from .errors import SchedulerError, where
from .plan.codec import topology_from_proto
from .plan.rescale import UpdateError
from .proto import control_pb2, plans_pb2, topology_pb2
from .statemgr import PHYSICAL_PLANS, TMASTERS, TOPOLOGIES, StateManager
from .wire import auth, tls
from .wire.frames import CONTROL, FrameAssembler, control_frame, parse_control

UPDATE_TIMEOUT_SECS = 180.0
M = TypeVar("M", bound=Message)


def ask_master(statemgr: StateManager, name: str, request: control_pb2.ControllerRequest,
               timeout: float = 5.0) -> control_pb2.ControllerResponse:
    deadline = time.monotonic() + timeout
    with MasterSession(statemgr, name, timeout) as session:
        return session.ask(request, deadline)


class Session:
    """One authenticated connection (the `cli` role) to a topology's master or to one of
    its stream managers, for one request or many: the UI's tracker asks every master every
    few seconds, and a new connection, handshake and reading of the master's nodes each
    time cost it more than the request."""

    def __init__(self, name: str, topology: topology_pb2.Topology, secret: bytes,
                 listener: str, host: str, port: int, timeout: float, what: str) -> None:
        self.name = name
        self.topology_id = topology.id
        self.address = (host, port)
        self.what = what  # "its topology master", for messages
        self._lock = threading.Lock()  # one request at a time: replies come in order
        _, tls_dial = tls.contexts(TopologyConfig.read(topology_from_proto(topology).config,
                                                       name).tls, name)
        expect = auth.Identity.tcp(topology.id, listener, host, port)
        try:
            self._sock = _connect(host, port, timeout, tls_dial)
        except OSError as exc:
            raise self._unreachable(exc) from exc
        try:
            session = auth.dial_sync(self._sock, secret, auth.CLI, expect, timeout)
        except (OSError, auth.AuthError) as exc:
            self._sock.close()
            raise self._unreachable(exc) from exc
        self._sealer = session.sealer
        self._assembler = session.assembler or FrameAssembler()
        self.closed = False

    def _unreachable(self, exc: Exception) -> SchedulerError:
        return SchedulerError(f"{where(self.name)}: cannot reach {self.what} at "
                              f"{self.address[0]}:{self.address[1]}: {exc}")

    def ask(self, request: Message, deadline: float,
            answer: type[M] = control_pb2.ControllerResponse) -> M:  # type: ignore[assignment]
        """The reply, by the monotonic `deadline`; any failure closes the session (a late
        reply must not answer the next request)."""
        with self._lock:
            if self.closed:
                raise self._unreachable(OSError("the connection was closed"))
            try:
                reply = self._exchange(request, deadline, answer)
            except (OSError, auth.AuthError) as exc:
                self.close()
                raise self._unreachable(exc) from exc
            if reply is None:
                self.close()
                msg = f"{where(self.name)}: {self.what} did not answer in time"
                raise SchedulerError(msg)
            return reply

    def _exchange(self, request: Message, deadline: float, answer: type[M]) -> M | None:
        frame = control_frame(request)  # sealed on TCP (the listener's is)
        self._sock.settimeout(max(0.001, deadline - time.monotonic()))
        self._sock.sendall(self._sealer.seal_bytes(frame) if self._sealer else frame)
        while (remaining := deadline - time.monotonic()) > 0:
            self._sock.settimeout(remaining)
            chunk = self._sock.recv(1 << 16)
            if not chunk:
                msg = "the connection was closed by the other end"
                raise OSError(msg)
            data, found = self._assembler.feed(chunk)
            for kind, _dest, start, end in found:
                if kind == CONTROL:
                    reply = parse_control(memoryview(data)[start:end])
                    if isinstance(reply, answer):
                        return reply
        return None

    def close(self) -> None:
        self.closed = True
        self._sock.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class MasterSession(Session):
    """A session with the topology's master, found through the state manager."""

    def __init__(self, statemgr: StateManager, name: str, timeout: float = 5.0) -> None:
        location = statemgr.get(TMASTERS, name)
        if location is None:
            msg = f"{where(name)}: no topology master is running (is the topology submitted?)"
            raise SchedulerError(msg)
        secret, topology = _secret_and_topology(statemgr, name)
        super().__init__(name, topology, secret, MASTER, location.host, location.server_port,
                         timeout, "its topology master")

    def ask(self, request: Message, deadline: float,
            answer: type[M] = control_pb2.ControllerResponse) -> M:  # type: ignore[assignment]
        if isinstance(request, control_pb2.ControllerRequest):
            request.topology_name = self.name
        return super().ask(request, deadline, answer)


def _secret_and_topology(statemgr: StateManager,
                         name: str) -> tuple[bytes, topology_pb2.Topology]:
    secret = statemgr.get_secret(name)
    topology = statemgr.get(TOPOLOGIES, name)
    if secret is None or topology is None:
        msg = f"{where(name)}: no secret or topology in the state manager ({statemgr.uri})"
        raise SchedulerError(msg)
    return secret, topology


def stmgr_of(statemgr: StateManager, name: str, task: int) -> plans_pb2.StreamManagerInfo:
    """The stream manager of the task's container, where the physical plan has it now."""
    pplan = statemgr.get(PHYSICAL_PLANS, name)
    if pplan is not None:
        instance = next((i for i in pplan.instances if i.task_id == task), None)
        if instance is not None:
            stmgr = next((s for s in pplan.stmgrs if s.id == instance.stmgr_id), None)
            if stmgr is not None:
                return stmgr
    msg = f"{where(name)}: its physical plan has no task {task} (is it running?)"
    raise SchedulerError(msg)


def stmgr_session(statemgr: StateManager, name: str, stmgr: plans_pb2.StreamManagerInfo,
                  timeout: float = 5.0) -> Session:
    """A session with one stream manager, which answers profile and log requests of its
    container's tasks only."""
    secret, topology = _secret_and_topology(statemgr, name)
    return Session(name, topology, secret, stmgr.id, stmgr.host, stmgr.data_port, timeout,
                   f"the stream manager of container {stmgr.container}")


def profile(statemgr: StateManager, name: str, task: int, kind: str, seconds: int = 5,
            timeout: float = 30.0) -> control_pb2.ProfileResponse:
    """A look inside one task (runtime.profiles), taken on its host by the stream manager
    of its container, whichever host that is."""
    stmgr = stmgr_of(statemgr, name, task)
    request = control_pb2.ProfileRequest(task_id=task, kind=kind, seconds=seconds)
    deadline = time.monotonic() + timeout
    with stmgr_session(statemgr, name, stmgr, min(timeout, 5.0)) as session:
        return session.ask(request, deadline, control_pb2.ProfileResponse)


def read_logs(session: Session, offsets: Mapping[int, int], max_bytes: int,
              timeout: float = 10.0,
              file: control_pb2.TaskFile = control_pb2.TASK_LOG) -> list[control_pb2.LogChunk]:
    """New bytes of the logs (or another `file`) of some tasks of the session's container:
    {task: offset to read from, -1 for the last `max_bytes`} -> a chunk per task, in the
    same order."""
    request = control_pb2.LogRequest(max_bytes=max_bytes, file=file, cursors=[
        control_pb2.LogCursor(task_id=task, offset=offset) for task, offset in offsets.items()])
    reply = session.ask(request, time.monotonic() + timeout, control_pb2.LogResponse)
    if not reply.status.ok:
        raise SchedulerError(reply.status.message)
    return list(reply.chunks)


def _connect(host: str, port: int, timeout: float,
             context: ssl.SSLContext | None) -> socket.socket:
    sock = socket.create_connection((host, port), timeout)
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
