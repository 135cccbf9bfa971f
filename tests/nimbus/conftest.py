"""The Nimbus tests' fixture: `heronbridge nimbus` started as a user starts it, on a free
loopback port with a home of its own, stopped with whatever it left running."""

from __future__ import annotations

import os
import signal
import socket
import subprocess

import pytest
from nimbuskit import Endpoint, free_port, stop_topologies
from testkit import HERONBRIDGE, wait_until


def _listening(port: int) -> bool:
    with socket.create_connection(("127.0.0.1", port), 0.5):
        return True


@pytest.fixture
def nimbus(tmp_path):
    """`heronbridge nimbus` on a free loopback port, with a home of its own."""
    home, port, log = tmp_path / "home", free_port(), tmp_path / "nimbus.log"
    env = {k: v for k, v in os.environ.items() if k != "HERONBRIDGE_STATE"}
    with log.open("wb") as out:
        process = subprocess.Popen([HERONBRIDGE, "nimbus", "--home", str(home), "--port",
                                    str(port)], stdout=out, stderr=subprocess.STDOUT, env=env)
    endpoint = Endpoint(home, port, process, log)
    try:
        wait_until(lambda: _listening(port), 30, "heronbridge nimbus to listen",
                   on_timeout=endpoint.output)
        yield endpoint
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(30)
        stop_topologies(home)



