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


class Record:
    """What librdkafka hands a delivery report: the record as it was produced."""

    def __init__(self, topic, key, value):
        self._content = (topic, key, value)

    def topic(self):
        return self._content[0]

    def key(self):
        return self._content[1]

    def value(self):
        return self._content[2]


class Producer:
    """Delivery reports are served by poll() once the broker has answered, in the order
    `answer` sets (produce order by default), each with its error or None."""

    def __init__(self, conf: dict) -> None:
        self.report = conf["on_delivery"]
        self.records: list[tuple] = []
        self.answered = 0  # records the broker has answered
        self.unreported: list[int] = []  # indexes into records
        self.errors: dict[int, str] = {}
        self.polls = 0

    def produce(self, topic, value, key):
        self.unreported.append(len(self.records))
        self.records.append((topic, key, value))

    def poll(self, timeout):
        self.polls += 1
        ready, self.unreported = (self.unreported[:self.answered],
                                  self.unreported[self.answered:])
        self.answered -= len(ready)
        for i in ready:
            self.report(self.errors.get(i), Record(*self.records[i]))
        return len(ready)


def kafka_bolt_task(monkeypatch) -> tuple[KafkaBolt, list]:
    monkeypatch.setattr(kafka_bolt, "Producer", Producer)
    b = KafkaBolt.__new__(KafkaBolt)
    b.topology_name, b.component_name, b.task_id = "counts", "sink", 4
    b.logger = logging.getLogger("test.kafka.bolt")
    acked: list = []
    b.ack = acked.append
    b.fail = lambda tup: acked.append(("failed", tup))
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


def test_each_report_settles_the_tuple_whose_record_it_is_in_any_order(monkeypatch):
    """Reports of records in different partitions come in any order."""
    b, acked = kafka_bolt_task(monkeypatch)
    tups = [SimpleNamespace(values=Count(w, n)) for w, n in (("a", 1), ("b", 1), ("c", 7))]
    for t in tups:
        b.process(t)
    b.producer.unreported = [2, 0, 1]
    b.producer.errors = {0: "refused"}
    b.producer.answered = 3
    assert b.wake() is None
    assert acked == [tups[2], ("failed", tups[0]), tups[1]]
    assert b.awaiting == {} and b.alike == {} and b.in_flight == 0


def test_tuples_whose_records_are_alike_are_each_settled_once(monkeypatch):
    """Alike records (topic, key and value) may be told apart in any order: one refused
    fails one of their tuples, one written acks another, and none is settled twice."""
    b, acked = kafka_bolt_task(monkeypatch)
    tups = [SimpleNamespace(values=Count("a", 1)) for _ in range(3)]
    for t in tups:
        b.process(t)
    b.producer.errors = {1: "refused"}
    b.producer.answered = 2
    b.wake()
    assert acked == [tups[0], ("failed", tups[1])]
    b.producer.answered = 1
    assert b.wake() is None
    assert acked == [tups[0], ("failed", tups[1]), tups[2]]
    assert b.awaiting == {} and b.alike == {}
