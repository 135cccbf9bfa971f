"""Holes 2 and 8, on the Nimbus endpoint: its plain port serves this user's processes only
and fails closed (a client that sends its call and closes at once used to pass as root);
unfinished uploads hold no descriptor and are capped; a flood of certificate-less
connections to the TLS port locks nobody out of the plain port and logs a few lines."""

from __future__ import annotations

import logging
import os
import socket
import struct
import time

import pytest
from thriftpy2.protocol import TBinaryProtocolFactory
from thriftpy2.rpc import make_client
from thriftpy2.transport import TFramedTransportFactory
from tlskit import CertificateAuthority

from heronbridge.compat.nimbus import idl
from heronbridge.compat.nimbus.server import MAX_CONNECTIONS, NimbusServer
from heronbridge.compat.nimbus.service import MAX_UPLOADS, NimbusService
from heronbridge.runtime.scheduler import Home

pytestmark = pytest.mark.integration


def framed_call(method: str) -> bytes:
    payload = struct.pack("!i", -2147418111) + struct.pack("!i", len(method)) + \
        method.encode() + struct.pack("!i", 0) + b"\x00"
    return struct.pack("!i", len(payload)) + payload


SEND_AND_CLOSE = r'''
import json, socket, sys, time
port, call, times = int(sys.argv[1]), bytes.fromhex(sys.argv[2]), int(sys.argv[3])
answered = 0
for _ in range(times):
    s = socket.create_connection(("127.0.0.1", port), 5)
    s.sendall(call)
    s.close()  # at once: the kernel then lists the socket as root's
for _ in range(5):  # and as a patient client
    s = socket.create_connection(("127.0.0.1", port), 5)
    s.settimeout(5)
    s.sendall(call)
    try:
        answered += len(s.recv(65536))
    except OSError:
        pass
    s.close()
print(json.dumps({"answered": answered}))
'''

HOLD_OPEN = r'''
import json, socket, sys, time
port, count, seconds = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
held = []
for _ in range(count):
    try:
        held.append(socket.create_connection(("127.0.0.1", port), 5))
    except OSError:
        pass
time.sleep(seconds)
print(json.dumps({"held": len(held)}))
'''


@pytest.fixture
def endpoint(tmp_path):
    home = Home(tmp_path / "home")
    state = home.open_state()
    ca = CertificateAuthority(tmp_path / "ca")
    cert, key = ca.issue("127.0.0.1")
    service = NimbusService(home, state)
    server = NimbusServer(service, port=0, tls=(str(cert), str(key), str(ca.path)),
                          tls_port=0).start()
    yield server, service
    server.close()
    state.close()


def client(server):
    return make_client(idl().Nimbus, host=server.host, port=server.port,
                       proto_factory=TBinaryProtocolFactory(),
                       trans_factory=TFramedTransportFactory(), timeout=20000)


def test_another_user_is_refused_even_when_it_closes_at_once(endpoint, attacker):
    server, service = endpoint
    report = attacker.run(SEND_AND_CLOSE, server.port, framed_call("beginFileUpload").hex(),
                          50)
    time.sleep(1)  # whatever was going to run, ran
    assert report["answered"] == 0
    assert list(service.inbox.folder.iterdir()) == []  # no upload was begun
    assert client(server).beginFileUpload()  # this user's call still is


def test_unfinished_uploads_hold_no_descriptor_and_are_capped(endpoint):
    server, service = endpoint
    nimbus = client(server)
    before = len(os.listdir("/proc/self/fd"))
    locations = [nimbus.beginFileUpload() for _ in range(MAX_UPLOADS)]
    for location in locations:
        nimbus.uploadChunk(location, b"PK" * 100)
    assert len(os.listdir("/proc/self/fd")) <= before + 2  # the client's own socket
    with pytest.raises(Exception, match=f"{MAX_UPLOADS} uploads are unfinished"):
        nimbus.beginFileUpload()
    nimbus.finishFileUpload(locations[0])
    assert nimbus.beginFileUpload()


def test_a_tls_flood_locks_nobody_out_and_logs_little(endpoint, attacker, caplog):
    server, _ = endpoint
    with caplog.at_level(logging.WARNING, "heronbridge.compat.nimbus"):
        flood = attacker.start(HOLD_OPEN, server.tls_port, MAX_CONNECTIONS + 30, 8)
        time.sleep(3)  # every connection made and held
        began = time.monotonic()
        assert client(server).getLeader().port == server.port
        assert time.monotonic() - began < 5
        out, err = flood.communicate(timeout=60)
    assert flood.returncode == 0, err
    refusals = [r for r in caplog.records if "refusing" in r.getMessage()]
    assert 1 <= len(refusals) <= 4, [r.getMessage() for r in refusals]
    assert any("more refused" in r.getMessage() or "already" in r.getMessage()
               for r in refusals)


def test_the_owner_is_read_only_from_a_live_socket():
    """A connection whose other end is gone has no owner to read: it is nobody's."""
    from heronbridge.runtime.procfs import tcp_peer_owner

    server = socket.create_server(("127.0.0.1", 0))
    peer = socket.create_connection(server.getsockname())
    conn, _ = server.accept()
    assert tcp_peer_owner(conn) == os.getuid()
    peer.close()
    time.sleep(0.1)
    assert tcp_peer_owner(conn) is None
    conn.close()
    server.close()
