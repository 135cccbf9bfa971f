"""The Kafka bolt's acks without a broker: a tuple is acked when its record's delivery
report is served, which the bolt's wake() (the runtime's call between input batches and
when asked) and its ticks do without waiting for another input tuple."""

from __future__ import annotations

import json
import logging
from collections import namedtuple
from types import SimpleNamespace

from heronbridge.kafka import bolt as kafka_bolt
from heronbridge.kafka.bolt import KafkaBolt

Count = namedtuple("Count", "word count")


class Producer:
    """Delivery reports are served by poll() once the broker has answered."""

    def __init__(self, conf: dict) -> None:
        self.records: list[tuple] = []
        self.answered = 0  # records the broker has answered
        self.callbacks: list = []
        self.polls = 0

    def produce(self, topic, value, key, on_delivery):
        self.records.append((topic, key, value))
        self.callbacks.append(on_delivery)

    def poll(self, timeout):
        self.polls += 1
        ready, self.callbacks = self.callbacks[:self.answered], self.callbacks[self.answered:]
        self.answered -= len(ready)
        for report in ready:
            report(None, None)
        return len(ready)


def kafka_bolt_task(monkeypatch) -> tuple[KafkaBolt, list]:
    monkeypatch.setattr(kafka_bolt, "Producer", Producer)
    b = KafkaBolt.__new__(KafkaBolt)
    b.topology_name, b.component_name, b.task_id = "counts", "sink", 4
    b.logger = logging.getLogger("test.kafka.bolt")
    acked: list = []
    b.ack = acked.append
    b.initialize({"kafka.bootstrap.servers": "127.0.0.1:1", "kafka.bolt.topic": "counts",
                  "kafka.bolt.key.field": "word", "kafka.bolt.message.field": "count"},
                 {"task->component": {"3": "sink", "4": "sink"}})
    return b, acked


def test_acks_follow_delivery_reports_through_wake_without_another_tuple(monkeypatch):
    b, acked = kafka_bolt_task(monkeypatch)
    first, second = (SimpleNamespace(values=Count(w, n)) for w, n in (("a", 1), ("b", 2)))
    b.process(first)
    b.process(second)
    assert b.producer.records == [("counts", b"a", b"1"), ("counts", b"b", b"2")]
    assert acked == []
    assert b.wake() == kafka_bolt.REPORTS_POLL_SECS  # records await reports: soon again
    b.producer.answered = 1
    assert b.wake() == kafka_bolt.REPORTS_POLL_SECS and acked == [first]
    b.producer.answered = 1
    assert b.wake() is None and acked == [first, second]  # nothing awaited: not until input


def test_a_tick_serves_reports_and_is_acked(monkeypatch):
    b, acked = kafka_bolt_task(monkeypatch)
    tup, tick = SimpleNamespace(values=Count("a", 1)), SimpleNamespace(values=[0.005])
    b.process(tup)
    b.producer.answered = 1
    b.process_tick(tick)  # a multilang child's wake tick, or Storm's every second
    assert acked == [tup, tick]


def test_spec_asks_multilang_hosts_for_wake_ticks_and_storm_for_ticks_each_second():
    config = json.loads(KafkaBolt.spec(name="sink").config)
    assert config[kafka_bolt.WAKE_KEY] == kafka_bolt.MULTILANG_POLL_SECS
    assert config[kafka_bolt.TICK_KEY] == 1


def test_records_poll_as_they_go_until_the_host_wakes_the_bolt(monkeypatch):
    """Under Storm (no wake) each record serves the reports that came; once the host
    calls wake() after each input batch, that call serves them instead."""
    b, acked = kafka_bolt_task(monkeypatch)
    b.process(SimpleNamespace(values=Count("a", 1)))
    assert b.producer.polls == 1
    b.wake()
    b.process(SimpleNamespace(values=Count("b", 2)))
    b.process(SimpleNamespace(values=Count("c", 3)))
    assert b.producer.polls == 2  # the wake's only
    b.producer.answered = 3
    assert b.wake() is None and len(acked) == 3
