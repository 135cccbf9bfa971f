"""Each word's new count, written to a Kafka topic (`kafka.bolt.topic`): the word is the
record's key, the count its value."""

from heronbridge.kafka import KafkaBolt


class CountSink(KafkaBolt):
    """Acks each count once Kafka has it; under EFFECTIVELY_ONCE, writes each
    checkpoint's counts in one Kafka transaction once the checkpoint is complete."""
