"""A streamparse bolt writing its input tuples to a Kafka topic, as storm-kafka-client's
KafkaBolt does.

    from heronbridge.kafka import KafkaBolt

    class CountSink(KafkaBolt):
        pass

    sink = CountSink.spec(inputs={count: Grouping.SHUFFLE},
                          config={"kafka.bolt.topic": "counts",
                                  "kafka.bolt.key.field": "word",
                                  "kafka.bolt.message.field": "count"})

Each tuple becomes one record: its `kafka.bolt.key.field` the key (none if the tuple has
no such field) and its `kafka.bolt.message.field` the value (text as UTF-8, bytes as
they are, anything else as JSON); override `tuple_to_record` to shape records yourself.

- **At least once**: a tuple is acked once Kafka's delivery report says the record is
  written (to every in-sync replica: `acks=all`, idempotent), failed if Kafka refused it.
  Reports are served as they come, without waiting for the next input tuple: on
  heronbridge in-process, the runtime calls `wake()` again every few milliseconds while
  records await theirs; under `--multilang`, `spec()` asks for a tick every few
  milliseconds while the bolt holds unacked tuples (`heronbridge.multilang.wake.secs`);
  on Storm, `spec()`'s tick tuples every second (unless its config sets them) serve a
  quiet stream's. No thread of the bolt's own: acks go out from the task's loop.
- **Effectively once** (`topology.reliability.mode: EFFECTIVELY_ONCE`, heronbridge): the
  records of each checkpoint interval are saved with the checkpoint, and written in one
  Kafka transaction once that checkpoint is complete (a two-phase commit: the checkpoint
  is the prepare, the transaction the commit). The same transaction commits, as the
  offset of a consumer group named after the producer's transactional id, which
  checkpoint it wrote; a bolt restored from a checkpoint whose records that group does
  not show written writes them then. A `read_committed` consumer therefore sees each
  record once, whatever was killed when; records become visible when their checkpoint
  completes.
"""

from __future__ import annotations

import json
import time
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer
from confluent_kafka import TopicPartition as TP
from streamparse import Bolt

from heronbridge.shims.storm.state import StatefulMixin

from .bounded import call_within
from .clientlog import client_logger, error_callback
from .errors import KafkaComponentError
from .settings import BoltSettings, Where

TICK_KEY = "topology.tick.tuple.freq.secs"
# heronbridge's: ticks to a multilang bolt while it holds unacked tuples.
WAKE_KEY = "heronbridge.multilang.wake.secs"
REPORTS_POLL_SECS = 0.002  # in-process: serve delivery reports this often while awaited
MULTILANG_POLL_SECS = 0.005  # under multilang (a tick each: a message both ways)
TRANSACTION_TIMEOUT = 120.0  # seconds a transaction keeps being retried before the task dies
CALL_TIMEOUT = 30.0  # one transactional call to Kafka
STUCK_GRACE = 5.0  # past CALL_TIMEOUT, a call that has not returned is given up
FULL_QUEUE_WAIT = 0.05  # the producer's queue is full: serve delivery reports this long


# One encoder for every record: json.dumps with separators builds a new one per call,
# which cost more than the rest of a record's encoding.
_to_json = json.JSONEncoder(separators=(",", ":")).encode


def encode(value: Any) -> bytes | None:
    cls = value.__class__
    if cls is str:
        return value.encode("utf-8")
    if cls is int:  # a count: its JSON is its decimal digits (bool, a subclass, is not)
        return str(value).encode("ascii")
    if value is None or isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8")
    return _to_json(value).encode("utf-8")


class KafkaBolt(StatefulMixin, Bolt):
    """Writes each input tuple to `kafka.bolt.topic`."""

    outputs: list = []
    auto_ack = False  # acked on Kafka's delivery report

    @classmethod
    def spec(cls, name: str | None = None, inputs: Any = None, par: Any = None,
             config: dict | None = None) -> Any:
        """streamparse's spec, with tick tuples every second (and, under multilang, a
        tick every few milliseconds while it holds unacked tuples) unless `config` sets
        them."""
        return super().spec(name=name, inputs=inputs, par=par,
                            config={TICK_KEY: 1, WAKE_KEY: MULTILANG_POLL_SECS,
                                    **(config or {})})

    # -- what a subclass may override ------------------------------------------------

    def tuple_to_record(self, tup: Any) -> tuple[Any, Any] | None:
        """(key, value) of the record for one input tuple, or None to write nothing."""
        values = tup.values
        s = self.settings
        try:
            value = getattr(values, s.message_field)
        except AttributeError:
            fields = getattr(values, "_fields", None)
            msg = (f"{self.where}: expected a field {s.message_field!r} "
                   f"(kafka.bolt.message.field) in tuples from {tup.component!r} stream "
                   f"{tup.stream!r}, received fields {list(fields) if fields else values!r}")
            raise KafkaComponentError(msg) from None
        return getattr(values, s.key_field, None), value

    def topic_of(self, tup: Any) -> str:
        """The topic a tuple's record goes to."""
        return self.settings.topic

    # -- pystorm's calls ---------------------------------------------------------------

    def initialize(self, storm_conf: dict, context: dict) -> None:
        self.where = Where(self.topology_name, self.component_name, self.task_id)
        tasks = sorted(int(t) for t, c in context["task->component"].items()
                       if c == self.component_name)
        s = self.settings = BoltSettings.read(storm_conf, self.where,
                                              tasks.index(int(self.task_id)))
        client_log = client_logger(self.logger)
        self.common = {"bootstrap.servers": s.bootstrap_servers, "logger": client_log,
                       "error_cb": error_callback(client_log, self.where)}
        self.delivered = self.refused = 0
        self.in_flight = 0  # records produced whose delivery report has not been served
        # The tuple of each record awaiting its report, by the record's content: a
        # callable per record cost 30% of the bolt's Kafka work (produce and reports). Two
        # tuples whose records are alike (topic, key and value) may be told apart in any
        # order, as what reached Kafka is the same.
        self.awaiting: dict[tuple, Any] = {}
        self.alike: dict[tuple, list] = {}  # the further tuples of a record in awaiting
        # Whether the host calls wake() after each input batch (heronbridge in-process):
        # then it serves the reports, and a poll after each record (a tenth of the
        # bolt's time) is left out; under Storm and multilang, records poll as they go.
        self.woken = False
        if not s.effectively_once:
            self.producer = Producer({**self.common, "acks": "all", "enable.idempotence": True,
                                      "linger.ms": 5, **s.producer,
                                      "on_delivery": self._report})
            return
        self.state.setdefault("pending", {})  # checkpoint id -> its records
        self.records: list[tuple[str, Any, Any]] = []  # since the last checkpoint
        self.marker_group = Consumer({**self.common, "group.id": s.transactional_id,
                                      "enable.auto.commit": False,
                                      "isolation.level": "read_committed"})
        self._new_producer()
        self.written = self._written_marker()
        self._write_completed(max(self.state["pending"], default=None))

    def process(self, tup: Any) -> None:
        record = self.tuple_to_record(tup)
        if self.settings.effectively_once:
            if record is not None:
                self.records.append((self.topic_of(tup), encode(record[0]), encode(record[1])))
            self.ack(tup)
            return
        if record is None:
            self.ack(tup)
            return
        topic, key, value = self.topic_of(tup), encode(record[0]), encode(record[1])
        producer = self.producer
        while True:
            try:
                producer.produce(topic, value, key)
                break
            except BufferError:  # its queue is full: let deliveries drain it
                producer.poll(FULL_QUEUE_WAIT)
        # Reports are served only by poll(), so this record's cannot have come yet.
        content = (topic, key, value)
        if content in self.awaiting:
            self.alike.setdefault(content, []).append(tup)
        else:
            self.awaiting[content] = tup
        self.in_flight += 1
        if not self.woken:
            producer.poll(0)

    def process_tick(self, tup: Any) -> None:
        if not self.settings.effectively_once:
            self.producer.poll(0)
        self.ack(tup)  # settled: a multilang host sends its next wake tick after this one

    def wake(self) -> float | None:
        """heronbridge's call from the task's loop, after each input batch and when the
        seconds returned have passed: serve the delivery reports that came (acking their
        tuples), and be called again soon while records await theirs."""
        if self.settings.effectively_once:
            return None
        self.woken = True
        self.producer.poll(0)
        return REPORTS_POLL_SECS if self.in_flight else None

    # -- checkpoints (heronbridge, effectively once) --------------------------------------

    def pre_save(self, checkpoint_id: str) -> None:
        """The prepare: this interval's records are saved with the checkpoint."""
        if self.records:
            self.state["pending"][checkpoint_id] = self.records
            self.records = []

    def post_save(self, checkpoint_id: str) -> None:
        """The commit: checkpoint `checkpoint_id` is complete, its records are written."""
        self._write_completed(checkpoint_id)

    # -- inside --------------------------------------------------------------------------

    def _report(self, err: Any, record: Any) -> None:
        content = (record.topic(), record.key(), record.value())
        tup = self.awaiting.pop(content)
        if self.alike:
            more = self.alike.get(content)
            if more:
                self.awaiting[content] = more.pop(0)
                if not more:
                    del self.alike[content]
        self.in_flight -= 1
        if err is None:
            self.delivered += 1
            self.ack(tup)
        else:
            self.refused += 1
            self.logger.warning("%s: Kafka did not take a record: %s", self.where, err)
            self.fail(tup)

    def _new_producer(self) -> None:
        s = self.settings
        self.producer = Producer({**self.common, "transactional.id": s.transactional_id,
                                  "acks": "all", "linger.ms": 5,
                                  "transaction.timeout.ms": int(TRANSACTION_TIMEOUT * 1000),
                                  **s.producer})
        # Fences any earlier producer of this id, aborting a transaction it left open.
        self._retrying("starting transactions", lambda: self.producer.init_transactions(
            CALL_TIMEOUT))

    def _written_marker(self) -> int:
        """The newest checkpoint whose records this task's transactions wrote."""
        def ask() -> int:
            found = self.marker_group.committed([TP(self.settings.topic, 0)],
                                                timeout=CALL_TIMEOUT)
            return max(found[0].offset, 0)

        return self._retrying("reading which checkpoint was written last", ask)

    def _write_completed(self, checkpoint_id: str | None) -> None:
        """Write, in one transaction, the records of every checkpoint up to
        `checkpoint_id` (complete, so they may be published), unless written already."""
        pending = self.state["pending"]
        ready = sorted(c for c in pending if checkpoint_id is not None and c <= checkpoint_id)
        if not ready:
            return
        marker = int(ready[-1])
        if marker > self.written:
            self._retrying("writing a transaction", lambda: self._transaction(
                [r for c in ready for r in pending[c]], marker))
            self.written = marker
        for c in ready:
            del pending[c]

    def _transaction(self, records: list, marker: int) -> None:
        """One transaction: the records, and `marker` as the marker group's offset."""
        p = self.producer
        try:
            p.begin_transaction()
            for topic, key, value in records:
                while True:
                    try:
                        p.produce(topic, value, key)
                        break
                    except BufferError:
                        p.poll(FULL_QUEUE_WAIT)
            self._send_marker(p, marker)
            self._retrying("committing a transaction", self._commit, retriable_only=True)
        except KafkaException as exc:
            # Start over: abort what this transaction wrote (or, if the producer cannot,
            # replace it: the new one fences it and aborts its transaction).
            if p is not self.producer:
                pass  # given up as stuck, and replaced already
            elif exc.args[0].fatal():
                self._new_producer()
            else:
                try:
                    p.abort_transaction(CALL_TIMEOUT)
                except KafkaException:
                    self._new_producer()
            raise
        self.delivered += len(records)

    def _send_marker(self, p: Any, marker: int) -> None:
        """`marker` into the transaction, as the marker group's offset. librdkafka does
        not enforce send_offsets_to_transaction's timeout: it waits for the group's
        coordinator, and after a broker restart may wait for ever (librdkafka issues
        5456 and 5511). So the call is bounded (bounded.py); if it has not returned
        in time, the producer is replaced (the new one fences it and aborts its
        transaction) and the transaction fails as timed out, to be written again."""
        done, _ = call_within(CALL_TIMEOUT + STUCK_GRACE, lambda: p.send_offsets_to_transaction(
            [TP(self.settings.topic, 0, marker)], self.marker_group.consumer_group_metadata(),
            CALL_TIMEOUT), f"kafka-marker-{marker}")
        if done:
            return
        why = (f"{self.where}: the producer did not add checkpoint {marker}'s marker to its "
               f"transaction within {CALL_TIMEOUT + STUCK_GRACE:g}s (the group's coordinator "
               "unreachable); replacing it")
        self.logger.warning("%s", why)
        self._new_producer()
        raise KafkaException(KafkaError(KafkaError._TIMED_OUT, why, retriable=True))

    def _commit(self) -> None:
        self.producer.commit_transaction(CALL_TIMEOUT)

    def _retrying(self, what: str, call: Any, retriable_only: bool = False) -> Any:
        """`call()`, again after a failure (only one Kafka calls retriable, with
        `retriable_only`), until TRANSACTION_TIMEOUT."""
        deadline = time.monotonic() + TRANSACTION_TIMEOUT
        while True:
            try:
                return call()
            except KafkaException as exc:
                if retriable_only and not exc.args[0].retriable():
                    raise
                if time.monotonic() > deadline:
                    msg = f"{self.where}: {what} failed for {TRANSACTION_TIMEOUT:g}s: {exc}"
                    raise KafkaComponentError(msg) from exc
                self.logger.warning("%s: %s failed, retrying: %s", self.where, what, exc)
                time.sleep(0.5)

