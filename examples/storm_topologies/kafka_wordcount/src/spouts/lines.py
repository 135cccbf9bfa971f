"""Lines of text from a Kafka topic (`kafka.spout.topics`), one tuple per record."""

from heronbridge.kafka import KafkaSpout


class LineSpout(KafkaSpout):
    """Emits storm-kafka-client's KafkaSpout's tuple, `[topic, partition, offset, key,
    value]`, the line being the value (so Storm's own KafkaSpout can stand in for it).
    Offsets are committed once every line before them is counted (at least once), or kept
    in checkpoints (`EFFECTIVELY_ONCE`)."""
