"""Components for the Kafka spout's tests: every record a bolt saw, written as JSON lines
to `<test.out>/<component>-<task>.jsonl`; a bolt that fails a record's first sightings."""

import json
import os

from streamparse import Bolt

from heronbridge.kafka import KafkaSpout


class RecordSpout(KafkaSpout):
    """storm-kafka-client's default tuple: topic, partition, offset, key, value."""


class Writer:
    def __init__(self, component):
        folder = component.storm_conf.get("test.out")
        os.makedirs(folder, exist_ok=True)
        name = f"{component.component_name}-{component.task_id}.jsonl"
        self.file = open(os.path.join(folder, name), "a", buffering=1)  # noqa: SIM115

    def write(self, record):
        self.file.write(json.dumps(record) + "\n")


class RecordBolt(Bolt):
    """Writes [partition, offset, attempt] for every record it acks; fails the first
    `test.fail.times` sightings of every `test.fail.every`-th offset."""

    outputs = []
    auto_ack = False

    def initialize(self, conf, ctx):
        self.out = Writer(self)
        self.fail_every = int(conf.get("test.fail.every") or 0)
        self.fail_times = int(conf.get("test.fail.times") or 0)
        self.seen = {}
        self.out.write({"event": "start", "pid": os.getpid()})

    def process(self, tup):
        key = (tup.values.partition, tup.values.offset)
        attempt = self.seen[key] = self.seen.get(key, 0) + 1
        if self.fail_every and key[1] % self.fail_every == 0 and attempt <= self.fail_times:
            self.out.write({"event": "fail", "partition": key[0], "offset": key[1],
                            "attempt": attempt})
            self.fail(tup)
            return
        self.out.write({"event": "ack", "partition": key[0], "offset": key[1],
                        "value": tup.values.value, "attempt": attempt, "from": tup.task})
        self.ack(tup)
