"""The Kafka spout against a real broker, at least once: failed records retried until
acked, offsets committed only past acked records, a restarted spout task and a topology
submitted again reading on from the committed offsets, partitions dealt anew when
`update` changes the spout's parallelism, and its lag on the UI's page, in Prometheus
and at Storm UI's lag API."""

from __future__ import annotations

import json
import os
import signal
import sys
import urllib.request
from collections import Counter
from pathlib import Path

import pytest
from kafkakit import create_topics, end_offsets, group_offsets, produce, unique
from testkit import read_jsonl, wait_until

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "faults"))
from faultkit import find_process  # noqa: E402

from heronbridge.runtime import control  # noqa: E402
from heronbridge.runtime.control import update  # noqa: E402
from heronbridge.runtime.plan import TaskLayout  # noqa: E402

pytestmark = [pytest.mark.integration, pytest.mark.kafka]

PROJECT = Path(__file__).resolve().parent / "project"
PARTITIONS = 3
GROUP = "records-records"  # <topology>-<component>


def values(count: int, start: int = 0) -> list[str]:
    return [f"record {i}" for i in range(start, start + count)]


def acked(out: Path) -> Counter:
    """How often each (partition, offset) was acked by the bolt, over every file."""
    seen: Counter = Counter()
    for records in read_jsonl(out, "seen-*.jsonl").values():
        seen.update((r["partition"], r["offset"]) for r in records if r.get("event") == "ack")
    return seen


def events(out: Path, kind: str) -> list[dict]:
    return [r for rs in read_jsonl(out, "seen-*.jsonl").values() for r in rs
            if r.get("event") == kind]


def everything(bootstrap: str, topic: str) -> set[tuple[int, int]]:
    ends = end_offsets(bootstrap, topic, PARTITIONS)
    return {(p, o) for p, end in ends.items() for o in range(end)}


def committed_to_end(bootstrap: str, topic: str) -> bool:
    return group_offsets(bootstrap, GROUP, topic, PARTITIONS) == \
        end_offsets(bootstrap, topic, PARTITIONS)


@pytest.fixture
def topic(kafka):
    name = unique("records")
    create_topics(kafka.bootstrap_servers, {name: PARTITIONS})
    return name


def options(kafka, topic: str, out: Path, **more) -> dict:
    return {"kafka.bootstrap.servers": kafka.bootstrap_servers, "kafka.spout.topics": topic,
            "test.out": str(out), "kafka.spout.offset.commit.period.ms": 200, **more}


def test_failed_records_come_back_until_acked(kafka, topic, run_project, tmp_path):
    produce(kafka.bootstrap_servers, topic, values(3000), PARTITIONS)
    opts = options(kafka, topic, tmp_path, **{"test.fail.every": 10, "test.fail.times": 3,
                                               "kafka.spout.retry.delay.period.ms": 20})
    with run_project(PROJECT, options=opts, env="test") as running:
        wait_until(lambda: committed_to_end(kafka.bootstrap_servers, topic), 120,
                   "every offset committed", interval=0.5, on_timeout=running.logs)
    seen = acked(tmp_path)
    assert set(seen) == everything(kafka.bootstrap_servers, topic)
    fails = Counter((r["partition"], r["offset"]) for r in events(tmp_path, "fail"))
    assert fails and set(fails.values()) == {3}  # each failed 3 times, then acked
    assert all(o % 10 == 0 for _, o in fails)
    retried = [r for r in events(tmp_path, "ack") if r["attempt"] > 1]
    assert {(r["partition"], r["offset"]) for r in retried} == set(fails)


def test_a_restarted_spout_task_reads_on_from_its_committed_offsets(
        kafka, topic, run_project, tmp_path):
    total = 20_000
    produce(kafka.bootstrap_servers, topic, values(total), PARTITIONS)
    with run_project(PROJECT, options=options(kafka, topic, tmp_path), env="test") as running:
        layout = TaskLayout.of(running.plan)
        spout = layout.component_tasks["records"][0]

        def half_committed() -> int:
            done = sum(max(0, o) for o in group_offsets(
                kafka.bootstrap_servers, GROUP, topic, PARTITIONS).values())
            return done if done >= total // 2 else 0

        before = wait_until(half_committed, 120, "half the records committed",
                            interval=0.2, on_timeout=running.logs)
        os.kill(find_process(running.plan.name, "task", 0, spout), signal.SIGKILL)
        wait_until(lambda: committed_to_end(kafka.bootstrap_servers, topic), 120,
                   "every offset committed after the restart", interval=0.5,
                   on_timeout=running.logs)
    seen = acked(tmp_path)
    assert set(seen) == everything(kafka.bootstrap_servers, topic)
    twice = sum(n - 1 for n in seen.values())
    # Read again: at most what was not committed when the task died (from the start,
    # it would be at least the committed half).
    assert twice <= total - before, (twice, total, before)


def test_a_topology_submitted_again_reads_on_from_the_committed_offsets(
        kafka, topic, run_project, tmp_path):
    produce(kafka.bootstrap_servers, topic, values(2000), PARTITIONS)
    first, second = tmp_path / "first", tmp_path / "second"
    with run_project(PROJECT, options=options(kafka, topic, first), env="test") as running:
        wait_until(lambda: committed_to_end(kafka.bootstrap_servers, topic), 120,
                   "the first records committed", interval=0.5, on_timeout=running.logs)
    old = everything(kafka.bootstrap_servers, topic)
    produce(kafka.bootstrap_servers, topic, values(2000, start=2000), PARTITIONS)
    with run_project(PROJECT, options=options(kafka, topic, second), env="test") as running:
        wait_until(lambda: committed_to_end(kafka.bootstrap_servers, topic), 120,
                   "the new records committed", interval=0.5, on_timeout=running.logs)
    assert set(acked(first)) == old
    assert set(acked(second)) == everything(kafka.bootstrap_servers, topic) - old
    assert set(acked(second).values()) == {1}


def test_update_deals_the_partitions_to_the_new_spout_tasks(
        kafka, topic, run_project, home, state, tmp_path):
    produce(kafka.bootstrap_servers, topic, values(3000), PARTITIONS)
    with run_project(PROJECT, options=options(kafka, topic, tmp_path), env="test") as running:
        name = running.plan.name
        wait_until(lambda: len(acked(tmp_path)) > 500, 120, "the first acks",
                   on_timeout=running.logs)
        update(state, name, {"records": 3}, reason="test: one spout task a partition")
        produce(kafka.bootstrap_servers, topic, values(3000, start=3000), PARTITIONS)
        wait_until(lambda: committed_to_end(kafka.bootstrap_servers, topic), 120,
                   "every offset committed after the update", interval=0.5,
                   on_timeout=running.logs)
        logs = running.logs()
    assert set(acked(tmp_path)) == everything(kafka.bootstrap_servers, topic)
    for index in (1, 2, 3):  # each of the three tasks reads one partition
        assert f"task {index} of 3 reads {topic}[{index - 1}]" in logs


@pytest.mark.compat("rest/GET /api/v1/topology/{topology}/lag")
def test_the_lag_is_on_the_page_in_prometheus_and_at_storms_lag_api(
        kafka, topic, run_project, state, tmp_path):
    from heronbridge.ui.server import UIServer
    from heronbridge.ui.tracker import Tracker

    produce(kafka.bootstrap_servers, topic, values(600), PARTITIONS)
    with run_project(PROJECT, options=options(kafka, topic, tmp_path), env="test") as running:
        name = running.plan.name
        wait_until(lambda: committed_to_end(kafka.bootstrap_servers, topic), 120,
                   "every offset committed", interval=0.5, on_timeout=running.logs)
        control.set_state(state, name, running=False)
        produce(kafka.bootstrap_servers, topic, values(90), PARTITIONS)  # 30 a partition
        tracker = Tracker(state, interval=0.5)
        server = UIServer(tracker, None, port=0).start()
        tracker.start()
        try:
            def storm_lag() -> dict:
                lag = get_json(server.url.rstrip("/") + f"/api/v1/topology/{name}/lag")
                parts = lag.get("records", {}).get("spoutLagResult", {}).get(topic, {})
                return lag if sorted(p["lag"] for p in parts.values()) == [30] * 3 else {}

            lag = wait_until(storm_lag, 60, "Storm UI's lag API to show 30 records a "
                             "partition", interval=0.5, on_timeout=running.logs)
            page = get_json(server.url.rstrip("/") + f"/ui/api/topology/{name}")
            text = get(server.url.rstrip("/") + "/metrics").decode()
        finally:
            server.close()
            tracker.stop()
    spout = lag["records"]
    assert spout["spoutType"] == "KAFKA"
    for partition, row in spout["spoutLagResult"][topic].items():
        assert row["logHeadOffset"] == 230 and row["consumerCommittedOffset"] == 200, \
            (partition, row)
    assert sorted((r["partition"], r["lag"]) for r in page["kafka"]) == \
        [(0, 30), (1, 30), (2, 30)]
    lines = [line for line in text.splitlines()
             if line.startswith("heronbridge_kafka_spout_lag_records{")]
    assert sorted(f'partition="{p}"' in line and f'topic="{topic}"' in line
                  and line.endswith(" 30.0") for p, line in enumerate(sorted(lines))) \
        == [True] * PARTITIONS, lines
    assert any(line.startswith("heronbridge_user_kafkaoffset_") and "_spoutlag{" in line
               for line in text.splitlines())


def get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=10) as reply:
        return reply.read()


def get_json(url: str) -> dict:
    return json.loads(get(url))
