"""The Kafka spout's offsets in a checkpoint (effectively once), against a real broker and
without a topology: a spout restored from a checkpoint taken before it read a partition
reads that partition from where the first one started, not from its end."""

from __future__ import annotations

import logging
import pickle
import time

import pytest
from kafkakit import create_topics, produce, unique

from heronbridge.kafka import KafkaSpout

pytestmark = [pytest.mark.integration, pytest.mark.kafka]

PARTITIONS = 2


def spout_task(bootstrap: str, topic: str, strategy: str,
               state: dict) -> tuple[KafkaSpout, list]:
    """A spout task's component as the runtime builds it at a rollback: the checkpoint's
    state, then initialize."""
    s = KafkaSpout.__new__(KafkaSpout)
    s.topology_name, s.component_name, s.task_id = "restored", "lines", 1
    s.logger = logging.getLogger("test.kafka.spout")
    emitted: list = []
    s.emit = lambda values, **_: emitted.append((values[1], values[2]))
    s.init_state(state)
    s.initialize({"kafka.bootstrap.servers": bootstrap, "kafka.spout.topics": topic,
                  "kafka.spout.first.poll.offset.strategy": strategy,
                  "topology.reliability.mode": "EFFECTIVELY_ONCE"},
                 {"task->component": {"1": "lines"}})
    return s, emitted


@pytest.mark.parametrize("strategy", ["UNCOMMITTED_EARLIEST", "UNCOMMITTED_LATEST"])
def test_a_checkpoint_taken_before_a_partition_was_read_restores_it_from_its_start(
        kafka, strategy):
    bootstrap, topic = kafka.bootstrap_servers, unique("unread")
    create_topics(bootstrap, {topic: PARTITIONS})
    first, _ = spout_task(bootstrap, topic, strategy, {})
    first.pre_save("00000000000000000001")  # nothing read yet
    saved = pickle.loads(pickle.dumps(first.state))
    first.consumer.close()
    produce(bootstrap, topic, [f"line {i}" for i in range(10)], PARTITIONS)
    restored, emitted = spout_task(bootstrap, topic, strategy, saved)
    deadline = time.monotonic() + 30
    while len(emitted) < 10 and time.monotonic() < deadline:
        restored.next_tuple()
        time.sleep(0.01)
    restored.consumer.close()
    assert sorted(emitted) == [(p, o) for p in range(PARTITIONS) for o in range(5)], saved
