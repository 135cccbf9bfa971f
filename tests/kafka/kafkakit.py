"""Kafka helpers for the tests: topics made and filled, read back, offsets asked."""

from __future__ import annotations

import random
import time
import uuid
from collections import Counter

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

WORDS = ("ember maple brook cedar river lumen stone grove north harbor quill amber drift "
         "fable glade hollow ivory jasper kestrel lattice meadow nimbus opal prairie").split()


def unique(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:8]}"


def create_topics(bootstrap: str, topics: dict[str, int], replication: int = 1,
                  config: dict | None = None) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(t, n, replication, config=config or {})
                                   for t, n in topics.items()])
    for future in futures.values():
        future.result(60)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # until every broker's metadata has them
        meta = admin.list_topics(timeout=10)
        if all(t in meta.topics and len(meta.topics[t].partitions) == n
               for t, n in topics.items()):
            return
        time.sleep(0.2)


def lines(count: int, seed: int = 11, words: int = 4) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(words)) for _ in range(count)]


def word_counts(text: list[str]) -> Counter:
    return Counter(w for line in text for w in line.split())


def produce(bootstrap: str, topic: str, values: list[str], partitions: int) -> None:
    """Each value to partition index % partitions, in order."""
    for p in range(partitions):
        produce_to(bootstrap, topic, values[p::partitions], p)


def produce_to(bootstrap: str, topic: str, values: list[str], partition: int) -> None:
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "acks": "all",
                  "enable.idempotence": True})
    for value in values:
        while True:
            try:
                p.produce(topic, value.encode(), partition=partition)
                break
            except BufferError:
                p.poll(0.05)
    assert p.flush(120) == 0


def read_topic(bootstrap: str, topic: str, partitions: int, committed: bool = True,
               expect: int | None = None, timeout: float = 120) -> list:
    """Every record of `topic` (read_committed unless `committed` is False): a list of
    (partition, offset, key, value) as text, until the end offsets (or `expect`
    records) are reached."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": unique("reader"),
                  "enable.auto.commit": False, "auto.offset.reset": "earliest",
                  "isolation.level": "read_committed" if committed else "read_uncommitted"})
    tps = [TopicPartition(topic, p, 0) for p in range(partitions)]
    ends = {p: c.get_watermark_offsets(TopicPartition(topic, p), timeout=30)[1]
            for p in range(partitions)}
    c.assign(tps)
    out = []
    deadline = time.monotonic() + timeout
    positions = dict.fromkeys(range(partitions), 0)
    while time.monotonic() < deadline:
        for m in c.consume(1000, 0.5):
            if m.error():
                continue
            out.append((m.partition(), m.offset(),
                        m.key().decode() if m.key() is not None else None,
                        m.value().decode() if m.value() is not None else None))
            positions[m.partition()] = m.offset() + 1
        if expect is not None and len(out) >= expect:
            break
        if expect is None:
            done = all(c.position([TopicPartition(topic, p)])[0].offset >= ends[p]
                       or ends[p] == 0 for p in range(partitions))
            if done:
                break
    c.close()
    return out


def group_offsets(bootstrap: str, group: str, topic: str, partitions: int) -> dict[int, int]:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    found = c.committed([TopicPartition(topic, p) for p in range(partitions)], timeout=30)
    c.close()
    return {tp.partition: tp.offset for tp in found}


def end_offsets(bootstrap: str, topic: str, partitions: int) -> dict[int, int]:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": unique("ends")})
    ends = {p: c.get_watermark_offsets(TopicPartition(topic, p), timeout=30)[1]
            for p in range(partitions)}
    c.close()
    return ends


def last_counts(records: list) -> dict[str, int]:
    out: dict[str, int] = {}
    for _, _, word, count in records:
        out[word] = max(out.get(word, 0), int(count))
    return out


def exactly_once(records: list, expected) -> list[str]:
    """What is wrong with a count topic under effectively-once: each word's counts must be
    1..N, each once, N its number of occurrences."""
    seen: dict[str, list[int]] = {}
    for _, _, word, count in records:
        seen.setdefault(word, []).append(int(count))
    wrong = []
    for word, n in expected.items():
        counts = sorted(seen.get(word, []))
        if counts != list(range(1, n + 1)):
            dupes = len(counts) - len(set(counts))
            wrong.append(f"{word}: {len(counts)} counts for {n} occurrences, {dupes} twice, "
                         f"highest {counts[-1] if counts else None}")
    return wrong + [f"{w}: not in the input" for w in seen if w not in expected]
