"""Kafka spouts' lag, read from their own metrics (the task gauges under
`user/kafkaOffset/`, storm-kafka-client's names, as heronbridge.kafka's KafkaSpout
reports them): for the page, Prometheus and Storm UI's `/api/v1/topology/ID/lag`."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from heronbridge.runtime.api.metrics import PREFIX

METRIC = f"{PREFIX}kafkaOffset/"
_PARTITION = re.compile(r"^(?P<topic>.+)/partition_(?P<partition>\d+)/(?P<name>[A-Za-z]+)$")


@dataclass(frozen=True)
class PartitionLag:
    component: str
    task: int
    topic: str
    partition: int
    committed: int  # the spout's latestCompletedOffset: committed (or checkpointed)
    head: int  # latestTimeOffset: the partition's end
    lag: int  # spoutLag


def partition_lags(report: Any) -> list[PartitionLag]:
    """Every partition a Kafka spout task reports, by component, topic and partition."""
    out = []
    for task in report.tasks if report is not None else []:
        found: dict[tuple[str, int], dict[str, float]] = {}
        for key, value in task.gauges.items():
            if not key.startswith(METRIC):
                continue
            m = _PARTITION.match(key[len(METRIC):])
            if m is not None:
                found.setdefault((m["topic"], int(m["partition"])), {})[m["name"]] = value
        for (topic, partition), values in found.items():
            if "spoutLag" in values:
                out.append(PartitionLag(
                    task.component, task.task_id, topic, partition,
                    int(values.get("latestCompletedOffset", -1)),
                    int(values.get("latestTimeOffset", -1)), int(values["spoutLag"])))
    return sorted(out, key=lambda p: (p.component, p.topic, p.partition))


def storm_lag(report: Any) -> dict[str, Any]:
    """Storm UI's topology lag: {spout: {spoutId, spoutType, spoutLagResult: {topic:
    {partition: {consumerCommittedOffset, logHeadOffset, lag}}}}}."""
    out: dict[str, Any] = {}
    for p in partition_lags(report):
        spout = out.setdefault(p.component, {"spoutId": p.component, "spoutType": "KAFKA",
                                             "spoutLagResult": {}})
        spout["spoutLagResult"].setdefault(p.topic, {})[str(p.partition)] = {
            "consumerCommittedOffset": p.committed, "logHeadOffset": p.head, "lag": p.lag}
    return out
