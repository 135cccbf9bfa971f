"""A real Kafka broker (KRaft, Maven Central's jars) for the Kafka tests: one for the
session, and a cluster of three for the fault cases."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def kafka_home(tmp_path_factory):
    return tmp_path_factory.mktemp("kafka-home")


@pytest.fixture(scope="session")
def kafka(tmp_path_factory, kafka_home):
    from heronbridge.conformance.kafka.broker import KafkaCluster

    cluster = KafkaCluster(tmp_path_factory.mktemp("kafka-1"), brokers=1, home=kafka_home)
    with cluster:
        yield cluster


@pytest.fixture(scope="session")
def kafka3(tmp_path_factory, kafka_home):
    from heronbridge.conformance.kafka.broker import KafkaCluster

    cluster = KafkaCluster(tmp_path_factory.mktemp("kafka-3"), brokers=3, home=kafka_home,
                           hosts=["127.0.0.1", "127.0.0.2", "127.0.0.3"])
    with cluster:
        yield cluster


@pytest.fixture(scope="session")
def host_jar() -> Path:
    """The JVM task host's jar: built by the conformance env before this one in CI, else
    here."""
    from heronbridge.conformance.storm import jvm_host

    jar = Path(os.environ.get(jvm_host.HOST_JAR_ENV) or
               ROOT / "jvm" / "target" / "heronbridge-jvm-host.jar")
    if not jar.is_file():
        subprocess.run([sys.executable, str(ROOT / "scripts" / "build_jvm_host.py"),
                        "--skip-tests"], check=True, stdout=subprocess.DEVNULL)
    os.environ[jvm_host.HOST_JAR_ENV] = str(jar)  # the tasks' class path names it
    return jvm_host.host_jar()
