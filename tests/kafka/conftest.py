"""A real Kafka broker (KRaft, Maven Central's jars) for the Kafka tests: one for the
session, and a cluster of three for the fault cases."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def kafka_home(tmp_path_factory):
    return tmp_path_factory.mktemp("kafka-home")


@pytest.fixture(scope="session")
def kafka(tmp_path_factory, kafka_home):
    from heronbridge.jvm.kafka import KafkaCluster

    cluster = KafkaCluster(tmp_path_factory.mktemp("kafka-1"), brokers=1, home=kafka_home)
    with cluster:
        yield cluster


@pytest.fixture(scope="session")
def kafka3(tmp_path_factory, kafka_home):
    from heronbridge.jvm.kafka import KafkaCluster

    cluster = KafkaCluster(tmp_path_factory.mktemp("kafka-3"), brokers=3, home=kafka_home,
                           hosts=["127.0.0.1", "127.0.0.2", "127.0.0.3"])
    with cluster:
        yield cluster


@pytest.fixture(scope="session")
def host_jar() -> Path:
    """The JVM task host's jar: the installed wheel's, or built on first use in an
    editable install."""
    from heronbridge.jvm.host import host_jar

    return host_jar()
