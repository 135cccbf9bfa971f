"""The `kafka.*` keys the Kafka spout and bolt read from their Storm config (the topology's
config with the component's own `config=` on top), checked once at start; README.md's
"Kafka" section has the table. Both read `kafka.bootstrap.servers`; the spout the
`kafka.spout.*` keys, the bolt the `kafka.bolt.*` keys. Durations are in ms, as
storm-kafka-client's; `kafka.spout.consumer` and `kafka.bolt.producer` pass librdkafka
settings through.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NoReturn

from .errors import KafkaComponentError
from .offsets import RetryPolicy

STRATEGIES = ("EARLIEST", "LATEST", "UNCOMMITTED_EARLIEST", "UNCOMMITTED_LATEST")
FORMATS = ("text", "json", "raw")
EFFECTIVELY_ONCE = "EFFECTIVELY_ONCE"


@dataclass(frozen=True)
class Where:
    """Who reads the settings, for the errors: topology, component and task."""

    topology: str
    component: str
    task: int

    def __str__(self) -> str:
        return f"topology {self.topology!r}, component {self.component!r}, task {self.task}"


class _Reader:
    def __init__(self, conf: Mapping[str, Any], where: Where) -> None:
        self.conf = conf
        self.where = where

    def fail(self, key: str, expected: str, value: Any) -> NoReturn:
        msg = f"{self.where}: expected {key} to be {expected}, received {value!r}"
        raise KafkaComponentError(msg)

    def text(self, key: str, default: str | None = None) -> str:
        value = self.conf.get(key, default)
        if not isinstance(value, str) or not value.strip():
            self.fail(key, "a non-empty string", value)
        return value.strip()

    def number(self, key: str, default: float, minimum: float = 0) -> float:
        value = self.conf.get(key, default)
        if isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                self.fail(key, f"a number >= {minimum:g}", value)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < minimum:
            self.fail(key, f"a number >= {minimum:g}", value)
        return value

    def whole(self, key: str, default: int, minimum: int = 0) -> int:
        value = self.optional_whole(key, default, minimum)
        if value is None:  # set to None, where no limit is not allowed
            self.fail(key, f"a whole number >= {minimum}", value)
        return value

    def optional_whole(self, key: str, default: int | None, minimum: int = 0) -> int | None:
        value = self.conf.get(key, default)
        if value is None:
            return None
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            self.fail(key, f"a whole number >= {minimum}", value)
        return value

    def flag(self, key: str, default: bool) -> bool:
        value = self.conf.get(key, default)
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
        if not isinstance(value, bool):
            self.fail(key, "true or false", value)
        return value

    def choice(self, key: str, default: str, choices: tuple[str, ...]) -> str:
        value = self.conf.get(key, default)
        if value not in choices:
            self.fail(key, "one of " + ", ".join(choices), value)
        return value

    def mapping(self, key: str) -> dict[str, Any]:
        value = self.conf.get(key) or {}
        if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
            self.fail(key, "an object of librdkafka settings", value)
        return dict(value)

    def topics(self, key: str) -> list[str]:
        value = self.conf.get(key)
        names = value.split(",") if isinstance(value, str) else value
        if not isinstance(names, (list, tuple)) or not names or \
                not all(isinstance(n, str) and n.strip() for n in names):
            self.fail(key, "a topic name, a list of them, or names separated by commas", value)
        return sorted({n.strip() for n in names})


def effectively_once(conf: Mapping[str, Any]) -> bool:
    return str(conf.get("topology.reliability.mode", "")).upper() == EFFECTIVELY_ONCE


@dataclass(frozen=True)
class SpoutSettings:
    bootstrap_servers: str
    topics: list[str]
    group_id: str
    strategy: str
    commit_period: float  # seconds
    max_uncommitted: int
    emit_batch: int
    refresh_period: float
    retry: RetryPolicy
    value_format: str
    emit_null_tuples: bool
    effectively_once: bool
    consumer: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def read(cls, conf: Mapping[str, Any], where: Where) -> SpoutSettings:
        r = _Reader(conf, where)
        ms = 0.001
        return cls(
            bootstrap_servers=r.text("kafka.bootstrap.servers"),
            topics=r.topics("kafka.spout.topics"),
            group_id=r.text("kafka.spout.group.id", f"{where.topology}-{where.component}"),
            strategy=r.choice("kafka.spout.first.poll.offset.strategy",
                              "UNCOMMITTED_EARLIEST", STRATEGIES),
            commit_period=r.number("kafka.spout.offset.commit.period.ms", 1000) * ms,
            max_uncommitted=r.whole("kafka.spout.max.uncommitted.offsets", 100_000, 1),
            emit_batch=r.whole("kafka.spout.emit.batch", 64, 1),
            refresh_period=r.number("kafka.spout.partition.refresh.period.ms", 2000, 100) * ms,
            retry=RetryPolicy(
                initial_delay=r.number("kafka.spout.retry.initial.delay.ms", 0) * ms,
                delay_period=r.number("kafka.spout.retry.delay.period.ms", 2) * ms,
                max_retries=r.optional_whole("kafka.spout.retry.max.retries", None, 0),
                max_delay=r.number("kafka.spout.retry.max.delay.ms", 10_000) * ms),
            value_format=r.choice("kafka.spout.value.format", "text", FORMATS),
            emit_null_tuples=r.flag("kafka.spout.emit.null.tuples", False),
            effectively_once=effectively_once(conf),
            consumer=r.mapping("kafka.spout.consumer"),
        )


@dataclass(frozen=True)
class BoltSettings:
    bootstrap_servers: str
    topic: str
    key_field: str
    message_field: str
    transactional_id: str
    effectively_once: bool
    producer: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def read(cls, conf: Mapping[str, Any], where: Where, task_index: int) -> BoltSettings:
        r = _Reader(conf, where)
        default_id = f"{where.topology}.{where.component}.{task_index}"
        prefix = conf.get("kafka.bolt.transactional.id")
        return cls(
            bootstrap_servers=r.text("kafka.bootstrap.servers"),
            topic=r.text("kafka.bolt.topic"),
            key_field=r.text("kafka.bolt.key.field", "key"),
            message_field=r.text("kafka.bolt.message.field", "message"),
            transactional_id=(f"{r.text('kafka.bolt.transactional.id')}.{task_index}"
                              if prefix is not None else default_id),
            effectively_once=effectively_once(conf),
            producer=r.mapping("kafka.bolt.producer"),
        )
