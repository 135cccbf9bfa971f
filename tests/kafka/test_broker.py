"""The tests' Kafka broker: ports it chose taken by another process before the broker
bound them (another cluster, anyone's listener) make it start on other ports, not fail."""

from __future__ import annotations

import socket

import pytest

from heronbridge.jvm.kafka import KafkaCluster, free_ports

pytestmark = [pytest.mark.integration, pytest.mark.kafka]


def test_free_ports_are_consecutive_and_below_the_ephemeral_range():
    with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
        low = int(f.read().split()[0])
    for _ in range(20):
        first, second = free_ports("127.0.0.1", 2)
        assert second == first + 1 and 10000 <= first and second < low


def test_a_port_taken_before_the_broker_binds_it_is_chosen_again(tmp_path, kafka_home):
    from confluent_kafka.admin import AdminClient

    cluster = KafkaCluster(tmp_path / "kafka", home=kafka_home)
    node = cluster.nodes[0]
    taken = node.port
    thief = socket.socket()
    thief.bind((node.host, taken))
    thief.listen()
    try:
        with cluster:
            assert node.port != taken and node.running
            admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
            assert list(admin.list_topics(timeout=30).brokers) == [1]
            assert f":{node.port}" in (node.folder / "server.properties").read_text()
    finally:
        thief.close()
