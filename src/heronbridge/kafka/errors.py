"""The Kafka components' root exception."""

from __future__ import annotations

from heronbridge.errors import HeronbridgeError


class KafkaComponentError(HeronbridgeError):
    """A Kafka spout or bolt was misconfigured, or Kafka refused what it asked."""
