"""The metrics manager: one per container.

Tasks and the stream manager publish cumulative metrics to it. It stitches a restarted
task's new counters onto the totals of its earlier incarnations, writes every sample to
a JSON-lines sink, and forwards the latest to the topology master.
"""

from __future__ import annotations

import asyncio
import json
import logging
import signal
import ssl
from pathlib import Path
from typing import Any

from ..addresses import MASTER, METRICS, metrics_address
from ..logfiles import RotatingOutput
from ..proto import control_pb2
from ..statemgr import TMASTERS, StateManager
from ..statemgr.follow import Follower
from ..telemetry import (
    LONGEST_UPTIME_SECS,
    PEAK_RSS_BYTES,
    RSS_BYTES,
    UPTIME_SECS,
    merge_exceptions,
)
from ..wire import auth
from ..wire.aio import FramedProtocol, listen_unix

log = logging.getLogger("heronbridge.runtime.metrics_manager")


class TaskSeries:
    """One task's metrics across incarnations."""

    def __init__(self) -> None:
        self.incarnation: int | None = None
        self.base: dict[str, float] = {}
        self.base_hist: dict[str, list[int]] = {}
        self.base_exceptions: list[control_pb2.ExceptionRecord] = []
        self.last: control_pb2.TaskMetrics | None = None
        # Over every sample: a task that never stays up still shows what it used.
        self.peaks = {PEAK_RSS_BYTES: 0.0, LONGEST_UPTIME_SECS: 0.0}

    def update(self, sample: control_pb2.TaskMetrics) -> control_pb2.TaskMetrics:
        if self.last is not None and sample.incarnation != self.incarnation:
            for name, value in self.last.counters.items():
                self.base[name] = self.base.get(name, 0) + value
            for name, hist in self.last.histograms.items():
                base = self.base_hist.setdefault(name, [0] * len(hist.counts))
                for i, c in enumerate(hist.counts):
                    base[i] += c
            if self.last.exceptions:  # what an earlier incarnation raised stays visible
                self.base_exceptions = merge_exceptions(self.base_exceptions,
                                                        self.last.exceptions)
        self.incarnation = sample.incarnation
        self.last = sample
        total = control_pb2.TaskMetrics()
        total.CopyFrom(sample)
        for name, value in self.base.items():
            total.counters[name] = total.counters.get(name, 0) + value
        for name, base in self.base_hist.items():
            counts = total.histograms[name].counts
            merged = [a + b for a, b in zip(base, list(counts) or [0] * len(base), strict=False)]
            del counts[:]
            counts.extend(merged)
        for peak, gauge in ((PEAK_RSS_BYTES, RSS_BYTES), (LONGEST_UPTIME_SECS, UPTIME_SECS)):
            self.peaks[peak] = max(self.peaks[peak], sample.gauges.get(gauge, 0.0))
            total.gauges[peak] = self.peaks[peak]
        if self.base_exceptions:
            merged_exceptions = merge_exceptions(self.base_exceptions, sample.exceptions)
            del total.exceptions[:]
            total.exceptions.extend(merged_exceptions)
        return total


def sample_record(topology: str, sample: control_pb2.TaskMetrics) -> dict[str, Any]:
    record: dict[str, Any] = {
        "ts_ms": sample.timestamp_ms, "topology": topology, "container": sample.container,
        "component": sample.component, "task": sample.task_id,
        "incarnation": sample.incarnation, "counters": dict(sample.counters),
        "gauges": dict(sample.gauges),
    }
    if sample.histograms:
        record["histograms"] = {name: {str(i): c for i, c in enumerate(h.counts) if c}
                                for name, h in sample.histograms.items()}
    return record


class PublisherLink(FramedProtocol):
    def __init__(self, mm: MetricsManager) -> None:
        super().__init__()
        self.mm = mm

    def message_received(self, message: Any) -> None:
        if isinstance(message, control_pb2.MetricsPublish):
            for sample in message.tasks:
                self.mm.receive(sample)


class MetricsManager:
    def __init__(self, statemgr: StateManager, topology_name: str, topology_id: str,
                 container: int, sink: Path, interval: float, secret: bytes,
                 tls_dial: ssl.SSLContext | None = None, sink_max_bytes: int = 10 << 20,
                 sink_backups: int = 5) -> None:
        self.statemgr = statemgr
        self.secret = secret
        self.tls_dial = tls_dial
        self.name = topology_name
        self.topology_id = topology_id
        self.container = container
        self.sink_path = sink
        self.sink_rotation = (sink_max_bytes, sink_backups)
        self.interval = interval
        self.series: dict[tuple[str, int], TaskSeries] = {}
        self.fresh: dict[tuple[str, int], control_pb2.TaskMetrics] = {}
        self._stopping = asyncio.Event()
        self._connected_to: Any = None

    def receive(self, sample: control_pb2.TaskMetrics) -> None:
        key = (sample.component, sample.task_id)
        series = self.series.setdefault(key, TaskSeries())
        self.fresh[key] = series.update(sample)

    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self._stopping.set)
        path = metrics_address(self.topology_id, self.container)
        who = f"metrics manager {self.container}"
        server = await listen_unix(auth.listen(
            lambda: PublisherLink(self), self.secret, {auth.TASK, auth.STMGR}, who,
            auth.Identity.unix(self.topology_id, METRICS, path)), path, who)
        self.sink_path.parent.mkdir(parents=True, exist_ok=True)
        master: FramedProtocol | None = None
        self.master_location = Follower(self.statemgr, TMASTERS, self.name)
        sink = RotatingOutput(self.sink_path, *self.sink_rotation)
        try:
            while not self._stopping.is_set():
                try:
                    await asyncio.wait_for(self._stopping.wait(), self.interval)
                except TimeoutError:
                    pass
                if self._stopping.is_set():
                    # Let tasks that are stopping too deliver their last samples.
                    await asyncio.sleep(min(1.0, self.interval))
                master = await self._forward(master)
                self._write(sink)
                self.fresh = {}
        finally:
            sink.close()
        server.close()
        self.master_location.cancel()
        return 0

    def _write(self, sink: RotatingOutput) -> None:
        if self.fresh:
            sink.write("".join(json.dumps(sample_record(self.name, sample),
                                          separators=(",", ":")) + "\n"
                               for sample in self.fresh.values()).encode())

    async def _forward(self, master: FramedProtocol | None) -> FramedProtocol | None:
        if not self.fresh:
            return master
        location = self.master_location.value
        if master is not None and (master.closed.done() or location is not self._connected_to):
            if master.transport is not None:
                master.transport.close()  # gone, or moved: follow it
            master = None
        if master is None and location is not None \
                and location.topology_id == self.topology_id:
            try:
                _, master = await auth.dial(
                    FramedProtocol, self.secret, auth.METRICS,
                    auth.Identity.tcp(self.topology_id, MASTER, location.host,
                                      location.server_port), ssl_context=self.tls_dial)
                self._connected_to = location
            except (OSError, auth.AuthError) as exc:
                if isinstance(exc, auth.AuthError):
                    log.warning("topology master at %s:%d: %s", location.host,
                                location.server_port, exc)
                master = None
        if master is not None:
            master.send(control_pb2.MetricsPublish(tasks=list(self.fresh.values())))
        return master
