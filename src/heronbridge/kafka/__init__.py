"""Kafka for streamparse topologies: a spout that reads topics with its offsets committed
on ack (or kept in checkpoints under effectively-once), and a bolt that writes a topic
(acking after Kafka's delivery reports, or in transactions tied to checkpoints).

    from heronbridge.kafka import KafkaBolt, KafkaSpout

Both are streamparse components configured from the topology's config (the `kafka.*`
keys, see settings.py) and need confluent-kafka (`pip install heronbridge[kafka]`).
They import nothing of the runtime: on Storm they run as any streamparse component, at
least once.
"""

from __future__ import annotations

from typing import Any

from .errors import KafkaComponentError

__all__ = ["KafkaBolt", "KafkaComponentError", "KafkaSpout"]


def __getattr__(name: str) -> Any:  # the components import confluent_kafka: only on use
    if name == "KafkaSpout":
        from .spout import KafkaSpout

        return KafkaSpout
    if name == "KafkaBolt":
        from .bolt import KafkaBolt

        return KafkaBolt
    msg = f"module {__name__!r} has no attribute {name!r}"
    raise AttributeError(msg)
