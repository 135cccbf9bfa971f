"""storm-kafka-client on the conformance suite's Storm: its jars, and the Flux that
declares its KafkaSpout (Flux builds the KafkaSpoutConfig from its Builder)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from heronbridge.jvm import JvmError, maven

POM = Path(__file__).resolve().parent / "storm-kafka-client.xml"
BUILDER = "org.apache.storm.kafka.spout.KafkaSpoutConfig$Builder"
CONFIG = "org.apache.storm.kafka.spout.KafkaSpoutConfig"
SPOUT = "org.apache.storm.kafka.spout.KafkaSpout"
STRINGS = "org.apache.kafka.common.serialization.StringDeserializer"
# KafkaSpout's default tuple (its RecordTranslator), as heronbridge.kafka's spout emits it.
FIELDS = ["topic", "partition", "offset", "key", "value"]


def jars(home: Path | None = None, log: maven.Log | None = None) -> list[Path]:
    """storm-kafka-client's jars (without Storm's own): resolved by Maven once."""
    from heronbridge.runtime.scheduler import default_home

    directory = Path(home or default_home()) / "storm-kafka-client"
    return maven.fetch(directory, POM, "storm-kafka-client", JvmError,
                       log or (lambda t: None))[0]


def kafka_spout(flux: dict[str, Any], spout_id: str, bootstrap: str, topics: list[str],
                group: str, parallelism: int, commit_period_ms: int = 1000) -> None:
    """Make `spout_id` of a Flux topology storm-kafka-client's KafkaSpout reading
    `topics` for consumer group `group` (at least once, its default)."""
    builder, config = f"{spout_id}-kafka-config-builder", f"{spout_id}-kafka-config"
    flux.setdefault("components", []).extend([
        {"id": builder, "className": BUILDER, "constructorArgs": [bootstrap, list(topics)],
         # The Builder's constructor sets no deserializers (its static builder() does).
         "configMethods": [{"name": "setProp", "args": ["key.deserializer", STRINGS]},
                           {"name": "setProp", "args": ["value.deserializer", STRINGS]},
                           {"name": "setProp", "args": ["group.id", group]},
                           {"name": "setOffsetCommitPeriodMs", "args": [commit_period_ms]}]},
        {"id": config, "className": CONFIG, "constructorArgs": [{"ref": builder}]}])
    spouts = [s for s in flux.get("spouts", []) if s["id"] != spout_id]
    spouts.append({"id": spout_id, "className": SPOUT, "constructorArgs": [{"ref": config}],
                   "parallelism": parallelism})
    flux["spouts"] = spouts
