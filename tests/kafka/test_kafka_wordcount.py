"""The Kafka word count example (examples/storm_topologies/kafka_wordcount) from a topic of
lines to a topic of counts, on the runtime, against a real broker: at least once (every
line counted); effectively once through kills is test_kafka_faults.py.
$HERONBRIDGE_FAULTS_SIZE=full reads 1,000,000 lines at least once (the default, `ci`,
5,000)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest
from kafkakit import (
    create_topics,
    end_offsets,
    group_offsets,
    last_counts,
    lines,
    produce,
    read_topic,
    unique,
    word_counts,
)
from testkit import wait_until

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "faults"))
from suite import size  # noqa: E402

pytestmark = [pytest.mark.integration, pytest.mark.kafka]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "storm_topologies" / "kafka_wordcount"
PARTITIONS = 4


AT_LEAST_ONCE_LINES = {"ci": 5_000, "full": 1_000_000}


@pytest.mark.timeout(3600 if size() == "full" else 300)
def test_at_least_once_every_line_counted(kafka, run_project, capsys):
    bootstrap = kafka.bootstrap_servers
    source, sink = unique("lines"), unique("counts")
    create_topics(bootstrap, {source: PARTITIONS, sink: 1})
    text = lines(AT_LEAST_ONCE_LINES[size()])
    produce(bootstrap, source, text, PARTITIONS)
    expected = word_counts(text)
    options = {"kafka.bootstrap.servers": bootstrap, "kafka.spout.topics": source,
               "kafka.bolt.topic": sink}
    with run_project(EXAMPLE, options=options) as running:
        began = time.monotonic()
        wait_until(lambda: group_offsets(bootstrap, "kafka_wordcount-lines", source,
                                         PARTITIONS) == end_offsets(bootstrap, source,
                                                                    PARTITIONS),
                   60 + len(text) / 200, "every line's offset committed", interval=1.0,
                   on_timeout=running.logs)
        took = time.monotonic() - began
    total = sum(expected.values())
    records = read_topic(bootstrap, sink, 1, timeout=60 + total / 20_000)
    with capsys.disabled():
        print(f"\nat least once: {len(text):,} lines, {total:,} words in {took:.1f} s; "
              f"{len(records):,} counts written ({len(records) - total:,} from replays)")
    # Every occurrence counted: each word's highest count reaches its occurrences (a
    # replayed line may count again: at least once).
    counts = last_counts(records)
    short = {w: (counts.get(w), n) for w, n in expected.items() if counts.get(w, 0) < n}
    assert not short, short
    assert set(counts) == set(expected)
