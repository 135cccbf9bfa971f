"""A streamparse spout reading Kafka topics, as storm-kafka-client's KafkaSpout does.

    from heronbridge.kafka import KafkaSpout

    class Lines(KafkaSpout):
        outputs = ["line"]

        def record_to_tuple(self, record):
            return [record.value()]

    class WordCount(Topology):
        config = {"kafka.bootstrap.servers": "127.0.0.1:9092"}
        lines = Lines.spec(par=2, config={"kafka.spout.topics": "lines"})

- **Partitions by task index**: every partition of its topics, sorted, is dealt to the
  spout's tasks by index (storm-kafka-client's RoundRobinManualPartitioner); a task that
  restarts with another index or task count (`heronbridge update`) reads its new share.
  Topics are looked up again every `kafka.spout.partition.refresh.period.ms`.
- **At least once**: each record is emitted with a message id; an offset is committed to
  the consumer group only once every record before it in its partition is acked. A
  failed record is emitted again after an exponential back-off. A restarted task, or a
  topology submitted again, starts from the committed offsets.
- **Effectively once** (`topology.reliability.mode: EFFECTIVELY_ONCE`, heronbridge): the
  offsets live in the spout's checkpointed state (a partition not read yet at the offset
  its first start found, never "the end", which would skip what was written since), a
  rollback rewinds to them, and they are committed to Kafka only once their checkpoint
  is complete (for monitoring tools; the checkpoint is what the spout restarts from).
- **next_tuple never waits**: it emits what the consumer already fetched (up to
  `kafka.spout.emit.batch` records), with every Kafka request in flight answered later.
- **Metrics**: `kafkaOffset` (storm-kafka-client's names: per partition `spoutLag`,
  `latestTimeOffset`, `latestEmittedOffset`, `latestCompletedOffset`, and
  `<topic>/totalSpoutLag`), the component's own metrics on heronbridge (`own_metrics`):
  in its UI, its Prometheus `/metrics` and Storm UI's `/api/v1/topology/ID/lag`.

The settings are the `kafka.*` keys of settings.py.
"""

from __future__ import annotations

import json
import time
from typing import Any

from confluent_kafka import (
    OFFSET_BEGINNING,
    OFFSET_END,
    OFFSET_INVALID,
    Consumer,
    KafkaError,
    TopicCollection,
)
from confluent_kafka import TopicPartition as TP
from confluent_kafka.admin import AdminClient, OffsetSpec
from streamparse import Spout

from heronbridge.shims.storm.state import StatefulMixin

from .clientlog import client_logger, error_callback
from .errors import KafkaComponentError
from .offsets import PartitionOffsets, RetrySchedule, assigned_partitions
from .settings import SpoutSettings, Where

METRICS_PERIOD = 1.0  # seconds between reports of the kafkaOffset metric
COMMITTED_TIMEOUT = 60.0  # at start, to read the group's committed offsets
METADATA_TIMEOUT = 30.0
NO_OFFSET = -1001  # librdkafka's "no committed offset"
QUIET_ERRORS = {KafkaError._PARTITION_EOF}  # noqa: SLF001 - librdkafka's own code


class KafkaSpout(StatefulMixin, Spout):
    """Reads the topics of `kafka.spout.topics`; override `record_to_tuple` (and
    `outputs`) to shape its tuples."""

    outputs = ["topic", "partition", "offset", "key", "value"]

    # -- what a subclass may override ------------------------------------------------

    def record_to_tuple(self, record: Any) -> list | None:
        """The tuple for one Kafka message (confluent_kafka.Message), or None to emit
        nothing for it (it counts as done at once). Key and value come decoded by
        `kafka.spout.value.format`."""
        return [record.topic(), record.partition(), record.offset(),
                self.decode(record.key()), self.decode(record.value())]

    def decode(self, data: bytes | None) -> Any:
        if data is None or self.settings.value_format == "raw":
            return data
        text = data.decode("utf-8")
        return json.loads(text) if self.settings.value_format == "json" else text

    # -- pystorm's calls ---------------------------------------------------------------

    def initialize(self, storm_conf: dict, context: dict) -> None:
        self.where = Where(self.topology_name, self.component_name, self.task_id)
        s = self.settings = SpoutSettings.read(storm_conf, self.where)
        tasks = sorted(int(t) for t, c in context["task->component"].items()
                       if c == self.component_name)
        self.task_index, self.task_count = tasks.index(int(self.task_id)), len(tasks)
        self.topology_id = storm_conf.get("storm.id")
        self.metadata = json.dumps({"topologyId": self.topology_id, "taskId": self.task_id})
        self.metrics_read = False  # by a host that asks own_metrics (heronbridge)
        client_log = client_logger(self.logger)
        common = {"bootstrap.servers": s.bootstrap_servers, "logger": client_log,
                  "error_cb": error_callback(client_log, self.where)}
        self.consumer = Consumer({
            **common, "group.id": s.group_id,
            "client.id": f"{self.topology_name}-{self.component_name}-{self.task_id}",
            "enable.auto.commit": False, "enable.auto.offset.store": False,
            "auto.offset.reset": "latest" if s.strategy.endswith("LATEST") else "earliest",
            "isolation.level": "read_committed",
            "queued.max.messages.kbytes": 8192,  # what it fetches ahead, at most
            **s.consumer})
        self.admin = AdminClient(common)
        self.partitions: dict[tuple[str, int], PartitionOffsets] = {}
        self.pending: dict[int, tuple[PartitionOffsets, int, list]] = {}  # msg id ->
        self.retries = RetrySchedule(s.retry)
        self.paused: set[tuple[str, int]] = set()
        self.next_id = 0
        self.given_up = 0
        self.highs: dict[tuple[str, int], int] = {}
        self.saved: dict[str, dict] = {}  # checkpoint id -> the offsets saved with it
        self._listing: Any = None
        self._highs_asked: Any = None
        now = time.monotonic()
        self.next_commit = now + s.commit_period
        self.next_refresh = now + s.refresh_period
        self.next_metrics = now + METRICS_PERIOD
        self.state.setdefault("offsets", {})
        found = self._partitions_now()
        self._assign(assigned_partitions(found, self.task_index, self.task_count), start=True)

    def next_tuple(self) -> None:
        now = time.monotonic()
        if now >= self.next_commit:
            self._commit()
            self.next_commit = now + self.settings.commit_period
        if now >= self.next_refresh or self._listing is not None:
            self._refresh(now)
        if now >= self.next_metrics or self._highs_asked is not None:
            self._metrics(now)
        if self.retries and self._retry(now):
            return
        emit, pending, batch = self.emit, self.pending, self.settings.emit_batch
        tracked = not self.settings.effectively_once
        partitions = self.partitions
        limit = self.settings.max_uncommitted
        for record in self.consumer.consume(batch, 0):
            if record.error() is not None:
                self._record_error(record)
                continue
            key = (record.topic(), record.partition())
            offsets = partitions.get(key)
            if offsets is None:  # a partition no longer ours (its fetch was in flight)
                continue
            offset = record.offset()
            values = None if (record.value() is None and not self.settings.emit_null_tuples) \
                else self.record_to_tuple(record)
            if values is None:
                offsets.skipped(offset)
                continue
            offsets.read(offset)
            if tracked:
                self.next_id += 1
                pending[self.next_id] = (offsets, offset, values)
                emit(values, tup_id=self.next_id)
                if offsets.uncommitted >= limit and key not in self.paused:
                    self.consumer.pause([TP(*key)])
                    self.paused.add(key)
            else:
                emit(values)

    def ack(self, tup_id: Any) -> None:
        entry = self.pending.pop(tup_id, None)
        if entry is not None:
            entry[0].ack(entry[1])
            if self.retries.fails:
                self.retries.done(tup_id)

    def fail(self, tup_id: Any) -> None:
        entry = self.pending.get(tup_id)
        if entry is None:
            return
        if not self.retries.schedule(tup_id, time.monotonic()):
            self.given_up += 1
            self.logger.warning("%s: gave up offset %d of a partition after %s retries",
                                self.where, entry[1], self.settings.retry.max_retries)
            self.ack(tup_id)

    def deactivate(self) -> None:
        """Storm deactivates a spout before an update or a kill: commit what is acked."""
        if not self.settings.effectively_once:
            self._commit(wait=True)

    # -- checkpoints (heronbridge, effectively once) --------------------------------------

    def pre_save(self, checkpoint_id: str) -> None:
        # A partition found after the start and not read yet has no offset to save (a
        # logical one such as -1, librdkafka's end, would skip records when restored):
        # restored, it starts as it did.
        offsets = {f"{t}:{p}": o.position for (t, p), o in self.partitions.items()
                   if o.position >= 0}
        self.state["offsets"].update(offsets)
        self.saved[checkpoint_id] = offsets
        while len(self.saved) > 8:  # the oldest were consistent or given up long ago
            del self.saved[min(self.saved)]

    def post_save(self, checkpoint_id: str) -> None:
        """Checkpoint `checkpoint_id` is complete: its offsets may be committed to Kafka."""
        offsets = self.saved.pop(checkpoint_id, None)
        for older in [c for c in self.saved if c < checkpoint_id]:
            del self.saved[older]
        if not offsets:
            return
        commits = []
        for name, offset in offsets.items():
            topic, _, partition = name.rpartition(":")
            po = self.partitions.get((topic, int(partition)))
            if po is not None:
                po.committed = offset
            commits.append(TP(topic, int(partition), offset, self.metadata))
        self._send_commit(commits, wait=False)

    # -- inside --------------------------------------------------------------------------

    def _partitions_now(self) -> list[tuple[str, int]]:
        """The topics' partitions, asked at start (where waiting is allowed)."""
        meta = self.consumer.list_topics(timeout=METADATA_TIMEOUT)
        found: list[tuple[str, int]] = []
        for topic in self.settings.topics:
            t = meta.topics.get(topic)
            if t is None or t.error is not None:
                self.logger.warning("%s: topic %r not found (yet); looked up again every "
                                    "%gs", self.where, topic, self.settings.refresh_period)
                continue
            found.extend((topic, p) for p in t.partitions)
        return found

    def _assign(self, mine: list[tuple[str, int]], start: bool = False) -> None:
        """Read exactly `mine`: new partitions from where they start, others dropped."""
        mine_set = set(mine)
        gone = [k for k in self.partitions if k not in mine_set]
        if gone:
            self.consumer.incremental_unassign([TP(*k) for k in gone])
            for k in gone:
                del self.partitions[k]
                self.paused.discard(k)
        new = [k for k in mine if k not in self.partitions]
        if not new:
            return
        starts = self._starts(new, start)
        if start and self.settings.effectively_once:
            starts = self._resolved(starts)
        for k in new:
            self.partitions[k] = PartitionOffsets(starts[k] if starts[k] >= 0 else None)
        self.consumer.incremental_assign([TP(*k, starts[k]) for k in new])
        self.logger.info("%s: task %d of %d reads %s", self.where, self.task_index + 1,
                         self.task_count,
                         ", ".join(f"{t}[{p}]" for t, p in sorted(self.partitions)))

    def _starts(self, new: list[tuple[str, int]], at_start: bool) -> dict[tuple[str, int], int]:
        """Where each new partition starts: the checkpoint's offset (effectively once),
        else the group's committed offset as the strategy says, else its first or last."""
        saved = self.state.get("offsets", {})
        strategy = self.settings.strategy
        committed = self._committed(new) if at_start else {}
        out = {}
        for k in new:
            offset, by_us = committed.get(k, (NO_OFFSET, False))
            name = f"{k[0]}:{k[1]}"
            if saved.get(name, -1) >= 0:  # -1: none known (as older checkpoints saved it)
                out[k] = saved[name]
            elif strategy.startswith("UNCOMMITTED") or by_us or self.settings.effectively_once:
                out[k] = offset if offset >= 0 else OFFSET_INVALID
            else:
                out[k] = OFFSET_BEGINNING if strategy == "EARLIEST" else OFFSET_END
        return out

    def _resolved(self, starts: dict[tuple[str, int], int]) -> dict[tuple[str, int], int]:
        """Each start that Kafka would decide (the first or last offset) made the offset
        it is now, so that a checkpoint taken before a partition's first record holds
        where this task started it: restored, it starts there again, not at the last
        offset of that time."""
        latest = self.settings.strategy.endswith("LATEST")  # as auto.offset.reset says
        out = dict(starts)
        for k, offset in starts.items():
            if offset < 0:
                low, high = self._at_start(
                    "the partitions' first and last offsets",
                    lambda k=k: self.consumer.get_watermark_offsets(TP(*k), timeout=10))
                last = offset == OFFSET_END or (offset == OFFSET_INVALID and latest)
                out[k] = high if last else low
        return out

    def _at_start(self, what: str, call: Any) -> Any:
        """`call()`, again after a failure (the group coordinator may still be loading, a
        broker restarting) until COMMITTED_TIMEOUT."""
        deadline = time.monotonic() + COMMITTED_TIMEOUT
        while True:
            try:
                return call()
            except Exception as exc:
                if time.monotonic() > deadline:
                    msg = f"{self.where}: cannot read {what}: {exc}"
                    raise KafkaComponentError(msg) from exc
                time.sleep(0.5)

    def _committed(self, keys: list[tuple[str, int]]) -> dict[tuple[str, int], tuple[int, bool]]:
        """The group's committed offset of each partition, and whether this topology
        committed it (storm-kafka-client's rule for EARLIEST and LATEST)."""
        found = self._at_start(
            f"group {self.settings.group_id!r}'s committed offsets",
            lambda: self.consumer.committed([TP(*k) for k in keys], timeout=10))
        out = {}
        for tp in found:
            try:
                by_us = json.loads(tp.metadata or "{}").get("topologyId") == self.topology_id
            except (ValueError, AttributeError):
                by_us = False
            out[(tp.topic, tp.partition)] = (tp.offset, by_us)
        return out

    def _retry(self, now: float) -> bool:
        emitted = False
        for msg_id in self.retries.due(now):
            entry = self.pending.get(msg_id)
            if entry is not None:
                self.emit(entry[2], tup_id=msg_id)
                emitted = True
        return emitted

    def _commit(self, wait: bool = False) -> None:
        if self.settings.effectively_once:
            return
        commits = []
        for key, po in self.partitions.items():
            point = po.commit_point
            if point > po.committed:
                commits.append(TP(*key, point, self.metadata))
                po.committed = point
            if key in self.paused and po.uncommitted < self.settings.max_uncommitted:
                self.consumer.resume([TP(*key)])
                self.paused.discard(key)
        if commits:
            self._send_commit(commits, wait)

    def _send_commit(self, commits: list, wait: bool) -> None:
        try:
            self.consumer.commit(offsets=commits, asynchronous=not wait)
        except Exception as exc:  # noqa: BLE001 - the next commit carries them again
            self.logger.warning("%s: committing offsets failed: %s", self.where, exc)

    def _refresh(self, now: float) -> None:
        """Look the topics up again, without waiting: the answer is read on a later
        call. A change of partitions changes what this task reads."""
        if self._listing is None:
            self._listing = self.admin.describe_topics(TopicCollection(self.settings.topics))
            self.next_refresh = now + self.settings.refresh_period
            return
        futures = self._listing
        if not all(f.done() for f in futures.values()):
            return
        self._listing = None
        found: list[tuple[str, int]] = []
        for topic, future in futures.items():
            try:
                description = future.result()
            except Exception:  # noqa: BLE001, S112 - not there (yet): looked up again later
                continue
            found.extend((topic, p.id) for p in description.partitions)
        if found or not self.partitions:
            self._assign(assigned_partitions(found, self.task_index, self.task_count))

    def _metrics(self, now: float) -> None:
        """Ask the partitions' last offsets (no waiting), for the lag own_metrics
        reports; read the answer on a later call."""
        if self._highs_asked is None:
            self.next_metrics = now + METRICS_PERIOD
            if self.partitions and self.metrics_read:
                self._highs_asked = self.admin.list_offsets(
                    {TP(*k): OffsetSpec.latest() for k in self.partitions})
            return
        asked = self._highs_asked
        if not all(f.done() for f in asked.values()):
            return
        self._highs_asked = None
        for tp, future in asked.items():
            try:
                self.highs[(tp.topic, tp.partition)] = future.result().offset
            except Exception:  # noqa: BLE001, S112 - a partition without a leader now
                continue

    def own_metrics(self) -> dict[str, dict[str, int]]:
        """heronbridge's call, once per metrics interval: the component's own metrics
        (on Storm, which has no such call, none are reported: an unregistered
        report_metric would stop the spout there)."""
        self.metrics_read = True
        self._metrics(time.monotonic())  # a paused spout's lag goes on being asked too
        return {"kafkaOffset": self.offset_metrics()}

    def offset_metrics(self) -> dict[str, int]:
        """storm-kafka-client's kafkaOffset metric, from what this task knows."""
        out: dict[str, int] = {}
        totals: dict[str, int] = {}
        for (topic, partition), po in sorted(self.partitions.items()):
            high = self.highs.get((topic, partition))
            if high is None:
                continue
            prefix = f"{topic}/partition_{partition}/"
            lag = max(0, high - po.committed)
            out[prefix + "spoutLag"] = lag
            out[prefix + "latestTimeOffset"] = high
            out[prefix + "latestEmittedOffset"] = po.position - 1
            out[prefix + "latestCompletedOffset"] = po.committed
            totals[topic] = totals.get(topic, 0) + lag
        for topic, lag in totals.items():
            out[f"{topic}/totalSpoutLag"] = lag
        return out

    def _record_error(self, record: Any) -> None:
        err = record.error()
        if err.code() in QUIET_ERRORS:
            return
        if err.fatal():
            msg = f"{self.where}: the Kafka consumer failed for good: {err}"
            raise KafkaComponentError(msg)
        self.logger.warning("%s: Kafka: %s", self.where, err)

