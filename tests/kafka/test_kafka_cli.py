"""`heronbridge kafka fetch` and `start` as a developer runs them: the jars resolved into
the home's cache, then a KRaft broker on a port of one's choosing that takes and gives
back a record, and stops on Ctrl-C."""

from __future__ import annotations

import re
import signal
import socket
import subprocess

import pytest
from kafkakit import create_topics, produce_to, read_topic, unique
from testkit import HERONBRIDGE, wait_until

pytestmark = [pytest.mark.integration, pytest.mark.kafka]


def two_free_ports() -> int:
    """A free port whose next one is free too (the broker's, then its controller's)."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        try:
            with socket.socket() as s:
                s.bind(("127.0.0.1", port + 1))
            return port
        except OSError:
            continue


@pytest.mark.compat("cli/heronbridge kafka", "cli/heronbridge kafka fetch",
                    "cli/heronbridge kafka start")
def test_kafka_fetch_then_start_serves_a_broker_until_ctrl_c(kafka_home, tmp_path):
    fetched = subprocess.run([HERONBRIDGE, "kafka", "fetch", "--home", str(kafka_home)],
                             capture_output=True, text=True, timeout=600, check=False)
    assert fetched.returncode == 0, fetched.stdout + fetched.stderr
    assert re.search(r"Apache Kafka [\d.]+: \d+ jars", fetched.stdout + fetched.stderr), \
        fetched.stdout + fetched.stderr

    port, said = two_free_ports(), tmp_path / "start.out"
    with said.open("w") as out:
        start = subprocess.Popen([HERONBRIDGE, "kafka", "start", "--port", str(port),
                                  "--home", str(kafka_home), "--folder", str(tmp_path / "kafka")],
                                 stdout=out, stderr=subprocess.STDOUT, text=True)
    try:
        found = wait_until(lambda: re.search(r"bootstrap servers (\S+)", said.read_text()),
                           120, "the broker's bootstrap servers", on_timeout=said.read_text)
        bootstrap = found.group(1)
        assert bootstrap == f"127.0.0.1:{port}", said.read_text()
        topic = unique("cli")
        create_topics(bootstrap, {topic: 1})
        produce_to(bootstrap, topic, ["hello"], 0)
        assert [r[3] for r in read_topic(bootstrap, topic, 1, expect=1)] == ["hello"]
    finally:
        start.send_signal(signal.SIGINT)
        start.wait(120)
    assert start.returncode == 0, said.read_text()
