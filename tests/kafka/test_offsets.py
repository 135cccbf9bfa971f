"""The Kafka spout's bookkeeping without a broker: partitions by task index, the commit
point behind the first unacked offset, the retry back-off, the settings' errors, and the
lag as the UI reads it from a task's gauges."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from heronbridge.kafka import KafkaComponentError
from heronbridge.kafka.offsets import (
    PartitionOffsets,
    RetryPolicy,
    RetrySchedule,
    assigned_partitions,
)
from heronbridge.kafka.settings import BoltSettings, SpoutSettings, Where
from heronbridge.runtime.api.metrics import own_gauges
from heronbridge.ui.kafka_lag import partition_lags, storm_lag

WHERE = Where("top", "lines", 7)


def test_partitions_are_dealt_by_task_index_over_every_topic():
    found = [("b", 1), ("a", 0), ("b", 0), ("a", 1), ("a", 2)]
    dealt = [assigned_partitions(found, i, 2) for i in range(2)]
    assert dealt == [[("a", 0), ("a", 2), ("b", 1)], [("a", 1), ("b", 0)]]
    assert assigned_partitions(found, 4, 5) == [("b", 1)]
    assert assigned_partitions(found, 5, 6) == []  # more tasks than partitions


def test_the_commit_point_waits_for_the_first_unacked_offset():
    po = PartitionOffsets(None)
    for offset in range(10, 15):
        po.read(offset)
    assert po.committed == 10 and po.commit_point == 10
    po.ack(12)
    po.ack(11)
    assert po.commit_point == 10  # 10 is not acked: nothing past it may be committed
    po.ack(10)
    assert po.commit_point == 13
    po.skipped(15)  # a record that maps to no tuple is done at once
    po.ack(14)
    assert po.commit_point == 13
    po.ack(13)
    assert po.commit_point == 16 and po.pending == 0


def test_failed_records_come_back_after_an_exponential_back_off():
    policy = RetryPolicy(initial_delay=0.0, delay_period=0.1, max_retries=3, max_delay=0.3)
    assert [policy.delay(n) for n in (1, 2, 3, 4)] == [0.0, 0.2, 0.3, 0.3]
    schedule = RetrySchedule(policy)
    assert schedule.schedule("a", 0.0) and schedule.schedule("b", 0.0)
    assert schedule.due(0.0) == ["a", "b"]
    assert schedule.schedule("a", 1.0)
    assert schedule.due(1.1) == [] and schedule.due(1.2) == ["a"]
    assert schedule.schedule("a", 2.0)
    assert not schedule.schedule("a", 3.0)  # a fourth failure: given up
    schedule.done("b")
    assert schedule.fails == {}


def test_settings_errors_name_the_task_the_key_and_what_was_received():
    with pytest.raises(KafkaComponentError) as caught:
        SpoutSettings.read({"kafka.bootstrap.servers": "h:1", "kafka.spout.topics": "t",
                            "kafka.spout.emit.batch": 0}, WHERE)
    assert str(caught.value) == ("topology 'top', component 'lines', task 7: expected "
                                 "kafka.spout.emit.batch to be a whole number >= 1, "
                                 "received 0")
    with pytest.raises(KafkaComponentError, match="kafka.spout.topics"):
        SpoutSettings.read({"kafka.bootstrap.servers": "h:1"}, WHERE)
    with pytest.raises(KafkaComponentError) as caught:  # no limit is no window: refused
        SpoutSettings.read({"kafka.bootstrap.servers": "h:1", "kafka.spout.topics": "t",
                            "kafka.spout.max.uncommitted.offsets": None}, WHERE)
    assert str(caught.value).endswith("expected kafka.spout.max.uncommitted.offsets to be a "
                                      "whole number >= 1, received None")
    retries = SpoutSettings.read({"kafka.bootstrap.servers": "h:1", "kafka.spout.topics": "t",
                                  "kafka.spout.retry.max.retries": None}, WHERE)
    assert retries.retry.max_retries is None  # retried for ever, as storm-kafka-client's
    s = SpoutSettings.read({"kafka.bootstrap.servers": "h:1", "kafka.spout.topics": "b, a,b",
                            "topology.reliability.mode": "EFFECTIVELY_ONCE"}, WHERE)
    assert s.topics == ["a", "b"] and s.group_id == "top-lines" and s.effectively_once
    b = BoltSettings.read({"kafka.bootstrap.servers": "h:1", "kafka.bolt.topic": "out"},
                          WHERE, 2)
    assert b.transactional_id == "top.lines.2" and not b.effectively_once


def test_the_lag_is_read_from_the_spouts_own_gauges():
    gauges = own_gauges({"kafkaOffset": {"t/partition_1/spoutLag": 5,
                                         "t/partition_1/latestTimeOffset": 25,
                                         "t/partition_1/latestCompletedOffset": 20,
                                         "t/totalSpoutLag": 5, "note": "text"},
                         "rate": 2, "flag": True})
    assert gauges == {"user/kafkaOffset/t/partition_1/spoutLag": 5.0,
                      "user/kafkaOffset/t/partition_1/latestTimeOffset": 25.0,
                      "user/kafkaOffset/t/partition_1/latestCompletedOffset": 20.0,
                      "user/kafkaOffset/t/totalSpoutLag": 5.0, "user/rate": 2.0}
    report = SimpleNamespace(tasks=[SimpleNamespace(component="lines", task_id=3,
                                                    gauges=gauges)])
    [lag] = partition_lags(report)
    assert (lag.topic, lag.partition, lag.committed, lag.head, lag.lag) == ("t", 1, 20, 25, 5)
    assert storm_lag(report) == {"lines": {
        "spoutId": "lines", "spoutType": "KAFKA", "spoutLagResult": {"t": {"1": {
            "consumerCommittedOffset": 20, "logHeadOffset": 25, "lag": 5}}}}}
