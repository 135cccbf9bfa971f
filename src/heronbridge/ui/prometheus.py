"""Prometheus `/metrics`: every task's cumulative counters and latest gauges, labelled
topology, component and task; each stream manager's, labelled topology and container.

Names follow Prometheus' conventions: a `heronbridge_` prefix, base units (seconds,
bytes), `_total` on counters. The complete-latency histogram is the runtime's sampled
one (a representative spread of each ack batch), folded into powers-of-four buckets.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

from heronbridge.runtime.telemetry import (
    ACK_COUNT,
    BACKPRESSURE_MS,
    BUCKETS_PER_OCTAVE,
    BYTES_ROUTED,
    COMPLETE_LATENCY,
    DROPPED_FRAMES,
    EMIT_COUNT,
    ERROR_COUNT,
    EXECUTE_COUNT,
    EXECUTE_TIME_NS,
    FAIL_COUNT,
    MAX_CONNECTION_BUFFER,
    NUM_BUCKETS,
    OUT_QUEUE_BYTES,
    PENDING,
    RSS_BYTES,
    TIMEOUT_COUNT,
    TREES_ACKED,
    TREES_EXPIRED,
    TREES_FAILED,
    TREES_PENDING,
    TUPLES_ROUTED,
)

from .custom import custom_metrics
from .kafka_lag import partition_lags
from .stats import STMGR, latency_sum_ms
from .tracker import Tracker

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
TASK = ["topology", "component", "task"]
STREAM_MANAGER = ["topology", "container"]

# (name, help, counter key, scale to base units)
TASK_COUNTERS = (
    ("heronbridge_tuples_emitted", "Tuples emitted.", EMIT_COUNT, 1.0),
    ("heronbridge_tuples_executed", "Tuples a bolt executed.", EXECUTE_COUNT, 1.0),
    ("heronbridge_tuples_acked", "Tuples acked (spouts: trees completed).", ACK_COUNT, 1.0),
    ("heronbridge_tuples_failed", "Tuples failed.", FAIL_COUNT, 1.0),
    ("heronbridge_tuples_timed_out", "Spout tuple trees that timed out.", TIMEOUT_COUNT, 1.0),
    ("heronbridge_execute_seconds", "Time spent in execute.", EXECUTE_TIME_NS, 1e-9),
    ("heronbridge_errors", "Errors reported or raised.", ERROR_COUNT, 1.0),
    ("heronbridge_backpressure_seconds", "Time the task's output was held back.",
     BACKPRESSURE_MS, 1e-3),
)
TASK_GAUGES = (
    ("heronbridge_task_resident_memory_bytes", "Resident memory of the task's process.",
     RSS_BYTES),
    ("heronbridge_spout_pending_tuples", "Spout tuples in flight.", PENDING),
    ("heronbridge_task_output_queue_bytes", "Bytes the task has not sent yet.",
     OUT_QUEUE_BYTES),
)
STMGR_COUNTERS = (
    ("heronbridge_stmgr_frames_routed", "Frames routed.", TUPLES_ROUTED, 1.0),
    ("heronbridge_stmgr_routed_bytes", "Bytes routed.", BYTES_ROUTED, 1.0),
    ("heronbridge_stmgr_dropped_frames", "Frames dropped (peer gone).", DROPPED_FRAMES, 1.0),
    ("heronbridge_stmgr_trees_acked", "Tuple trees completed.", TREES_ACKED, 1.0),
    ("heronbridge_stmgr_trees_failed", "Tuple trees failed.", TREES_FAILED, 1.0),
    ("heronbridge_stmgr_trees_expired", "Tuple trees timed out.", TREES_EXPIRED, 1.0),
    ("heronbridge_stmgr_backpressure_seconds", "Time the container's spouts were paused.",
     BACKPRESSURE_MS, 1e-3),
)
STMGR_GAUGES = (
    ("heronbridge_stmgr_pending_trees", "Tuple trees in flight.", TREES_PENDING),
    ("heronbridge_stmgr_max_connection_buffer_bytes", "Largest unsent buffer of a link.",
     MAX_CONNECTION_BUFFER),
    ("heronbridge_stmgr_resident_memory_bytes", "Resident memory of the stream manager.",
     RSS_BYTES),
)
# Histogram bounds: every 8th bucket edge, i.e. 2^(2k) microseconds (256 us to ~18 min).
_EDGES = list(range(4 * 8, NUM_BUCKETS + 1, 8))


class TopologyCollector(Collector):
    def __init__(self, tracker: Tracker) -> None:
        self.tracker = tracker

    def collect(self) -> Iterator[Metric]:
        tops = self.tracker.all()
        info = GaugeMetricFamily("heronbridge_topology_info", "A topology the state manager "
                                 "knows (value 1).", labels=["topology", "id", "state"])
        running = GaugeMetricFamily("heronbridge_topology_running",
                                    "1 while the topology's spouts run, 0 when deactivated.",
                                    labels=["topology"])
        uptime = GaugeMetricFamily("heronbridge_topology_uptime_seconds",
                                   "Seconds since the topology was submitted.",
                                   labels=["topology"])
        up = GaugeMetricFamily("heronbridge_topology_master_up", "1 if the last request to "
                               "the topology master succeeded.", labels=["topology"])
        for t in tops:
            state = {1: "RUNNING", 2: "PAUSED", 3: "KILLED"}.get(t.state, "UNKNOWN")
            info.add_metric([t.name, t.id, state], 1)
            running.add_metric([t.name], 1 if t.running else 0)
            uptime.add_metric([t.name], t.uptime)
            up.add_metric([t.name], 1 if t.error is None and t.report is not None else 0)
        yield from (info, running, uptime, up)
        yield from self._tasks(tops)
        yield from self._stmgrs(tops)
        yield from self._custom(tops)
        yield from self._kafka_lag(tops)

    def _custom(self, tops: list) -> Iterator[Metric]:
        """The components' own metrics: `heronbridge_user_NAME` (a counter gains
        `_total`), labelled by topology, component and task like the runtime's."""
        families: dict[str, Metric] = {}
        for t in tops:
            for m in custom_metrics(t):
                name = "heronbridge_user_" + re.sub(r"[^A-Za-z0-9_]", "_", m["name"]).lower()
                family = families.get(name)
                if family is None:
                    kind = CounterMetricFamily if m["kind"] == "counter" else GaugeMetricFamily
                    family = families[name] = kind(
                        name, f"{m['name']}: a {m['kind']} the component reports itself.",
                        labels=TASK)
                elif (m["kind"] == "counter") != isinstance(family, CounterMetricFamily):
                    continue  # a counter and a gauge of one name: the first kind seen wins
                family.add_metric([t.name, m["component"], str(m["task"])], m["value"])
        yield from families.values()

    def _tasks(self, tops: list) -> Iterator[Metric]:
        counters = [CounterMetricFamily(n, h, labels=TASK) for n, h, _, _ in TASK_COUNTERS]
        gauges = [GaugeMetricFamily(n, h, labels=TASK) for n, h, _ in TASK_GAUGES]
        restarts = CounterMetricFamily("heronbridge_task_restarts",
                                       "Times the task's process was restarted.", labels=TASK)
        latency = HistogramMetricFamily(
            "heronbridge_complete_latency_seconds",
            "Spout tuple tree completion time, from emit to ack (sampled).", labels=TASK)
        for t in tops:
            for task in t.report.tasks if t.report is not None else []:
                if task.component == STMGR:
                    continue
                labels = [t.name, task.component, str(task.task_id)]
                for family, (_, _, key, scale) in zip(counters, TASK_COUNTERS, strict=True):
                    family.add_metric(labels, task.counters.get(key, 0.0) * scale)
                for family, (_, _, key) in zip(gauges, TASK_GAUGES, strict=True):
                    if key in task.gauges:
                        family.add_metric(labels, task.gauges[key])
                restarts.add_metric(labels, task.incarnation)
                hist = task.histograms.get(COMPLETE_LATENCY) if task.histograms else None
                if hist is not None:
                    latency.add_metric(labels, *_buckets(list(hist.counts)))
        yield from counters
        yield from gauges
        yield restarts
        yield latency

    def _stmgrs(self, tops: list) -> Iterator[Metric]:
        counters = [CounterMetricFamily(n, h, labels=STREAM_MANAGER)
                    for n, h, _, _ in STMGR_COUNTERS]
        gauges = [GaugeMetricFamily(n, h, labels=STREAM_MANAGER) for n, h, _ in STMGR_GAUGES]
        for t in tops:
            for task in t.report.tasks if t.report is not None else []:
                if task.component != STMGR:
                    continue
                labels = [t.name, str(task.container)]
                for family, (_, _, key, scale) in zip(counters, STMGR_COUNTERS, strict=True):
                    family.add_metric(labels, task.counters.get(key, 0.0) * scale)
                for family, (_, _, key) in zip(gauges, STMGR_GAUGES, strict=True):
                    if key in task.gauges:
                        family.add_metric(labels, task.gauges[key])
        yield from counters
        yield from gauges


    def _kafka_lag(self, tops: list) -> Iterator[Metric]:
        """Kafka spouts' lag per partition (read from their own metrics)."""
        lag = GaugeMetricFamily("heronbridge_kafka_spout_lag_records", "Records of a Kafka "
                                "partition past the spout's committed (or checkpointed) "
                                "offset.", labels=[*TASK, "topic", "partition"])
        for t in tops:
            for p in partition_lags(t.report):
                lag.add_metric([t.name, p.component, str(p.task), p.topic, str(p.partition)],
                               p.lag)
        yield lag


def _buckets(counts: list[int]) -> tuple[list[tuple[str, float]], float]:
    """Cumulative (le, count) pairs in seconds, and the sum of observations."""
    out = []
    seen = 0
    start = 0
    for edge in _EDGES:
        seen += sum(counts[start:edge])
        start = edge
        out.append((f"{2 ** (edge / BUCKETS_PER_OCTAVE) / 1e6:g}", float(seen)))
    seen += sum(counts[start:])
    out.append(("+Inf", float(seen)))
    return out, latency_sum_ms(counts) / 1000


class Exposition:
    """The text format of everything the tracker holds, rendered per scrape."""

    def __init__(self, tracker: Tracker) -> None:
        self.collector = TopologyCollector(tracker)

    def render(self) -> bytes:
        return text_format(self.collector.collect())


_ESCAPES = str.maketrans({"\\": r"\\", "\n": r"\n", '"': r'\"'})


def text_format(families: Iterable[Metric]) -> bytes:
    """Prometheus' text format (what `generate_latest` writes) of families whose metric
    and label names are valid already, as ours are: a twentieth of its time, which
    validates and escapes every name of every sample (60 ms a scrape of 20 topologies)."""
    out = []
    labels_of: dict[tuple, str] = {}  # most families share their tasks' label sets
    for family in families:
        name = family.name + "_total" if family.type == "counter" else family.name
        doc = family.documentation.replace("\\", r"\\").replace("\n", r"\n")
        out.append(f"# HELP {name} {doc}\n# TYPE {name} {family.type}\n")
        for s in family.samples:
            key = tuple(s.labels.items())
            labels = labels_of.get(key)
            if labels is None:
                labels = labels_of[key] = ",".join(
                    f'{k}="{str(v).translate(_ESCAPES)}"' for k, v in sorted(key))
            out.append(f"{s.name}{{{labels}}} {floatToGoString(s.value)}\n" if labels
                       else f"{s.name} {floatToGoString(s.value)}\n")
    return "".join(out).encode()
