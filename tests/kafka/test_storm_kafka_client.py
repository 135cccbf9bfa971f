"""storm-kafka-client's own KafkaSpout on the runtime, as a streamparse project declares
it: a JavaSpout of heronbridge.jvm.kafka.JsonKafkaSpout (its configuration one JSON
argument), each task a JVM of the task host, against the same broker as the Python
spout's tests, at least once: failed records come back through its retry service, every
record reaches the Python bolt, each partition is read by one task, and its consumer
group commits every offset."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
from kafkakit import create_topics, end_offsets, group_offsets, produce, unique
from testkit import Running, read_jsonl, wait_until

from heronbridge.compat.streamparse import load_project
from heronbridge.conformance.kafka import storm_kafka
from heronbridge.jvm.storm import give_classpath
from heronbridge.runtime.errors import SchedulerError

pytestmark = [pytest.mark.integration, pytest.mark.kafka]

PROJECT = Path(__file__).resolve().parent / "project"
PARTITIONS = 4
TOPOLOGY = '''"""storm-kafka-client's KafkaSpout (two JVM tasks) to the Python bolt."""

from parts.records import RecordBolt
from streamparse import Grouping, JavaSpout, Topology


class JavaRecords(Topology):
    records = JavaSpout.spec(
        name="records", full_class_name="heronbridge.jvm.kafka.JsonKafkaSpout",
        args_list=[{config!r}], outputs={fields!r}, par=2)
    seen = RecordBolt.spec(inputs={{records: Grouping.fields("partition", "offset")}}, par=2)
'''


def test_storm_kafka_clients_spout_runs_as_a_java_task(kafka, host_jar, storm_home, home,
                                                        state, tmp_path):
    topic, group = unique("javarecords"), unique("storm-kafka-client")
    create_topics(kafka.bootstrap_servers, {topic: PARTITIONS})
    produce(kafka.bootstrap_servers, topic, [f"record {i}" for i in range(4000)], PARTITIONS)
    project = tmp_path / "project"
    shutil.copytree(PROJECT, project)
    config = json.dumps({"bootstrap.servers": kafka.bootstrap_servers, "topics": [topic],
                         "group.id": group, "offset.commit.period.ms": 200,
                         "first.poll.offset.strategy": "EARLIEST"})
    (project / "topologies" / "javarecords.py").write_text(
        TOPOLOGY.format(config=config, fields=storm_kafka.FIELDS))
    out = tmp_path / "out"
    loaded = load_project(project, "javarecords", "test",
                          {"test.out": str(out), "test.fail.every": 25, "test.fail.times": 2},
                          False, home.workdir("javarecords") / "resources")
    give_classpath(loaded.plan, storm_kafka.jars(storm_home), storm_home)
    ends = end_offsets(kafka.bootstrap_servers, topic, PARTITIONS)
    running = Running(loaded.plan, home, state, loaded)
    try:
        # Four tasks, two of them JVMs: a loaded host takes longer than Running's 90 s.
        running.start(timeout=240)
    except SchedulerError as exc:
        pytest.fail(f"{exc}\n{running.logs()}")
    try:
        wait_until(lambda: group_offsets(kafka.bootstrap_servers, group, topic,
                                         PARTITIONS) == ends, 240,
                   "storm-kafka-client's group committed every offset", interval=0.5,
                   on_timeout=running.logs)
    finally:
        running.stop()
    records = [r for rs in read_jsonl(out, "seen-*.jsonl").values() for r in rs]
    acked = Counter((r["partition"], r["offset"]) for r in records if r["event"] == "ack")
    assert set(acked) == {(p, o) for p, end in ends.items() for o in range(end)}
    failed = Counter((r["partition"], r["offset"]) for r in records if r["event"] == "fail")
    assert failed and set(failed.values()) == {2}  # retried by KafkaSpout, then acked
    retried = {(r["partition"], r["offset"]) for r in records
               if r["event"] == "ack" and r["attempt"] > 1}
    assert retried == set(failed)
    readers: dict[int, set] = {}
    for r in records:
        if r["event"] == "ack":
            readers.setdefault(r["partition"], set()).add(r["from"])
    assert all(len(tasks) == 1 for tasks in readers.values()), readers  # one task each
    assert len(set().union(*readers.values())) == 2  # and both tasks read
