"""The Kafka bolt's transactions without a broker: a checkpoint's records are written
once it is complete, and a producer that hangs adding the checkpoint's marker (librdkafka
waits for ever for a group coordinator lost in a broker restart) is replaced, and the
transaction written again, instead of blocking the task."""

from __future__ import annotations

import logging
import threading
from collections import namedtuple
from types import SimpleNamespace

from heronbridge.kafka import bolt as kafka_bolt
from heronbridge.kafka.bolt import KafkaBolt

Count = namedtuple("Count", "word count")
CONF = {"kafka.bootstrap.servers": "127.0.0.1:1", "kafka.bolt.topic": "counts",
        "kafka.bolt.key.field": "word", "kafka.bolt.message.field": "count",
        "topology.reliability.mode": "EFFECTIVELY_ONCE"}


class Producer:
    """A transactional producer; the first one made hangs in send_offsets_to_transaction
    until released, as librdkafka's may."""

    made: list[Producer] = []

    def __init__(self, conf: dict) -> None:
        self.hangs = not Producer.made
        self.release = threading.Event()
        self.calls: list[str] = []
        self.open: list[tuple] = []  # the transaction's records
        self.committed: list[tuple] = []
        Producer.made.append(self)

    def init_transactions(self, timeout):
        self.calls.append("init")

    def begin_transaction(self):
        self.calls.append("begin")
        self.open = []

    def produce(self, topic, value, key):
        self.open.append((topic, key, value))

    def send_offsets_to_transaction(self, offsets, metadata, timeout):
        self.calls.append(f"offsets {offsets[0].offset}")
        if self.hangs:
            self.release.wait()

    def commit_transaction(self, timeout):
        self.calls.append("commit")
        self.committed += self.open

    def abort_transaction(self, timeout):
        self.calls.append("abort")


class Consumer:
    def __init__(self, conf: dict) -> None:
        pass

    def committed(self, partitions, timeout):
        return [SimpleNamespace(offset=-1001)]  # nothing written yet

    def consumer_group_metadata(self):
        return object()


def test_a_producer_hanging_on_the_marker_is_replaced_and_the_transaction_written_again(
        monkeypatch):
    monkeypatch.setattr(kafka_bolt, "Producer", Producer)
    monkeypatch.setattr(kafka_bolt, "Consumer", Consumer)
    monkeypatch.setattr(kafka_bolt, "CALL_TIMEOUT", 0.05)
    monkeypatch.setattr(kafka_bolt, "STUCK_GRACE", 0.05)
    monkeypatch.setattr(kafka_bolt.time, "sleep", lambda _secs: None)
    monkeypatch.setattr(Producer, "made", [])
    b = KafkaBolt.__new__(KafkaBolt)
    b.topology_name, b.component_name, b.task_id = "counts", "sink", 4
    b.logger = logging.getLogger("test.kafka.bolt")
    b.state, b.ack = {}, lambda _tup: None
    b.initialize(CONF, {"task->component": {"4": "sink"}})
    b.process(SimpleNamespace(values=Count("a", 1)))
    b.pre_save("00000000000000000007")
    try:
        b.post_save("00000000000000000007")
    finally:
        Producer.made[0].release.set()
    stuck, second = Producer.made
    assert stuck.calls == ["init", "begin", "offsets 7"]  # never committed, nor aborted
    assert second.calls == ["init", "begin", "offsets 7", "commit"]
    assert second.committed == [("counts", b"a", b"1")]
    assert b.written == 7 and b.state["pending"] == {}


def test_the_bolt_still_runs_in_its_tasks_loop():
    """Checkpointing needs the lean host, which refuses components whose modules use
    threads: the bounded call lives outside the bolt's module."""
    from heronbridge.shims.storm.lean import lean_capable

    assert lean_capable(KafkaBolt)
