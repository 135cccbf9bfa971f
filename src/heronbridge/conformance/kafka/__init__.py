"""Apache Kafka for the tests, the benchmarks and development: brokers in KRaft mode from
Maven Central's jars (broker.py)."""

from .. import ConformanceError


class KafkaBrokerError(ConformanceError):
    """A Kafka broker could not be fetched, set up, started or stopped."""


__all__ = ["KafkaBrokerError"]
