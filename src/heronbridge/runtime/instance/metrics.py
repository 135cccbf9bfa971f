"""What a task tells its operators and what they set: its metrics, published to its
container's metrics manager, the exceptions it reports, log levels and event sampling."""

from __future__ import annotations

import socket
import time

from ..addresses import METRICS
from ..log_levels import LogLevels
from ..proto import control_pb2
from ..sampling import Sampler
from ..telemetry import ExceptionLog
from ..wire import auth
from ..wire.frames import control_frame


class MetricsPublisher:
    """Best effort: metrics never block or crash the task; a lost sample is replaced by
    the next one, since counters are cumulative."""

    def __init__(self, address: str, topology_id: str, component: str, task: int,
                 secret: bytes) -> None:
        self.address = address
        self.identity = auth.Identity.unix(topology_id, METRICS, address)
        self.secret = secret
        self.register = control_pb2.RegisterMetricsPublisher(
            topology_id=topology_id, component=component, task_id=task)
        self._sock: socket.socket | None = None
        self._retry_at = 0.0

    def publish(self, metrics: control_pb2.TaskMetrics) -> None:
        frame = control_frame(control_pb2.MetricsPublish(tasks=[metrics]))
        sock = self._sock or self._connect()
        if sock is None:
            return
        try:
            sock.sendall(frame)
        except OSError:
            self._sock = None
            sock.close()

    def _connect(self) -> socket.socket | None:
        if time.monotonic() < self._retry_at:
            return None
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.settimeout(0.2)
            sock.connect(self.address)
            auth.dial_sync(sock, self.secret, auth.TASK, self.identity, timeout=1.0)
            sock.sendall(control_frame(self.register))
        except (OSError, auth.AuthError):
            sock.close()
            self._retry_at = time.monotonic() + 1.0
            return None
        self._sock = sock
        return sock

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None


class TaskTelemetry:
    """A task's publisher (once registered), exception log, log levels set at run time
    (until their timeout), event sampling (while it is on), and what it died of."""

    __slots__ = ("crashes", "errors", "exceptions", "log_levels", "publisher", "sampler",
                 "started_at")

    def __init__(self) -> None:
        self.publisher: MetricsPublisher | None = None
        self.exceptions = ExceptionLog()
        self.log_levels = LogLevels()
        self.sampler: Sampler | None = None
        self.started_at: float | None = None  # when the component was opened or prepared
        self.crashes = 0  # the component's code ended the task
        self.errors = 0  # errors the task died of (those the component reported: its collector's)
