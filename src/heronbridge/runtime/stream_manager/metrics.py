"""The stream manager's own metrics, sent to its container's metrics manager.

Besides its totals it counts backpressure time per cause (`backpressure-ms/task/N`,
`backpressure-ms/stmgr/ID`) and each local task's queue (`queue-bytes/task/N`) and what
was written to it (`bytes-to/task/N`): the health manager reads them to find who is slow.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from ..addresses import METRICS, metrics_address
from ..procfs import rss_bytes
from ..proto import control_pb2
from ..telemetry import (
    BACKPRESSURE_MS,
    BYTES_ROUTED,
    DISCARDED_FRAMES,
    DROPPED_FRAMES,
    HELD_BYTES,
    HELD_FRAMES,
    MALFORMED_FRAMES,
    MAX_CONNECTION_BUFFER,
    RSS_BYTES,
    TREES_ACKED,
    TREES_EXPIRED,
    TREES_FAILED,
    TREES_PENDING,
    TUPLES_ROUTED,
)
from ..wire import auth
from ..wire.aio import FramedProtocol
from .backpressure import Backpressure
from .links import InstanceLink, Link, is_open
from .router import Router

STMGR_COMPONENT = "__stmgr__"
BP_BY_CAUSE = BACKPRESSURE_MS + "/{}/{}"  # e.g. backpressure-ms/task/4
QUEUE_BYTES = "queue-bytes/task/{}"
BYTES_TO = "bytes-to/task/{}"  # written to a local task: what it consumed, near enough


def sample(container: int, router: Router, backpressure: Backpressure,
           instances: dict[int, InstanceLink], peers: list[Link]) -> control_pb2.TaskMetrics:
    links = [*instances.values(), *peers]
    buffered = max((_queued(link) for link in links), default=0)
    counters = {BP_BY_CAUSE.format("task" if kind == "instance" else kind, who): ms
                for (kind, who), ms in backpressure.ms_by_cause().items()}
    gauges = {QUEUE_BYTES.format(task): _queued(link)
              for task, link in instances.items() if is_open(link)}
    counters.update({BYTES_TO.format(task): link.sent for task, link in instances.items()})
    metrics = control_pb2.TaskMetrics(
        component=STMGR_COMPONENT, task_id=-1, container=container,
        timestamp_ms=int(time.time() * 1000),
        counters={TUPLES_ROUTED: router.routed, BYTES_ROUTED: router.bytes_routed,
                  DROPPED_FRAMES: router.dropped, MALFORMED_FRAMES: router.malformed,
                  DISCARDED_FRAMES: router.discarded, HELD_FRAMES: router.undelivered.held,
                  TREES_ACKED: router.acked,
                  TREES_FAILED: router.failed, TREES_EXPIRED: router.expired,
                  BACKPRESSURE_MS: backpressure.paused_ms()},
        gauges={TREES_PENDING: len(router.tracker), MAX_CONNECTION_BUFFER: buffered,
                HELD_BYTES: router.undelivered.bytes, RSS_BYTES: rss_bytes()})
    metrics.counters.update(counters)
    metrics.gauges.update(gauges)
    return metrics


def _queued(link: Link) -> int:
    """Bytes written to an open link and not yet sent (0 for a closed one)."""
    transport = link.transport
    return 0 if transport is None or transport.is_closing() \
        else transport.get_write_buffer_size()


async def publish(topology_id: str, container: int, secret: bytes, interval: float,
                  collect: Callable[[], control_pb2.TaskMetrics]) -> None:
    """Every interval, send a sample to the container's metrics manager (dialled again if
    it went)."""
    link: FramedProtocol | None = None
    metrics_manager = auth.Identity.unix(topology_id, METRICS,
                                         metrics_address(topology_id, container))
    while True:
        await asyncio.sleep(interval)
        if link is None or link.closed.done():
            try:
                _, link = await auth.dial(FramedProtocol, secret, auth.STMGR, metrics_manager)
            except (OSError, auth.AuthError):
                link = None
                continue
        link.send(control_pb2.MetricsPublish(tasks=[collect()]))
