"""What heronbridge runs on a JVM, found through the installed package: the JVM task
host's jar (host.py: in a wheel, built by Maven while the wheel built; in a checkout,
built on first use), Apache Storm's jars that Java components and `storm jar` run
against (storm.py), and Apache Kafka brokers for development (kafka.py), the jars of
both resolved from Maven Central by Maven (maven.py) once per version."""

from heronbridge.errors import HeronbridgeError


class JvmError(HeronbridgeError):
    """Java, Maven or a jar that a Java part of a topology needs is missing or failed."""


__all__ = ["JvmError"]
