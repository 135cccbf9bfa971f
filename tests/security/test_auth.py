"""The handshake every connection runs (runtime/wire/auth.py), on real sockets: both sides
prove the secret before a frame passes; a wrong secret, role, uid, silence or garbage is
refused and logged; TLS with a CA the test makes."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import ssl

import pytest
from tlskit import CertificateAuthority

from heronbridge.runtime.proto import control_pb2
from heronbridge.runtime.wire import auth, tls
from heronbridge.runtime.wire.aio import FramedProtocol
from heronbridge.runtime.wire.frames import control_frame

SECRET = b"s" * 32


class Recorder(FramedProtocol):
    """Records control messages; every instance is one accepted connection."""

    made: list[Recorder] = []

    def __init__(self) -> None:
        super().__init__()
        self.messages: list = []
        Recorder.made.append(self)

    def message_received(self, message) -> None:
        self.messages.append(message)
        self.send(message)  # echo


def hello() -> control_pb2.StreamManagerHello:
    return control_pb2.StreamManagerHello(topology_id="t", stmgr_id="stmgr-1")


def me(port, name="stmgr-1"):
    return auth.Identity.tcp("t-1", name, "127.0.0.1", port)


async def serve(roles=frozenset({auth.STMGR}), secret=SECRET, unix=None, context=None,
                name="stmgr-1"):
    Recorder.made = []
    loop = asyncio.get_running_loop()
    if unix:
        factory = auth.listen(Recorder, secret, roles, "test listener",
                              auth.Identity.unix("t-1", name, unix))
        return await loop.create_unix_server(factory, unix), None
    factory = auth.listen(Recorder, secret, roles, "test listener")
    server = await loop.create_server(factory, "127.0.0.1", 0, ssl=context)
    port = server.sockets[0].getsockname()[1]
    factory.identity = me(port, name)
    return server, port


def run(coro):
    return asyncio.run(coro)


def test_both_sides_prove_the_secret_then_frames_flow():
    async def main():
        server, port = await serve()
        transport, link = await auth.dial(FramedProtocol, SECRET, auth.STMGR, me(port))
        got = asyncio.get_running_loop().create_future()
        link.message_received = got.set_result
        link.send(hello())
        echoed = await asyncio.wait_for(got, 5)
        transport.close()
        server.close()
        return echoed, link.role, Recorder.made[0].role

    echoed, dialer_role, listener_role = run(main())
    assert echoed == hello() and dialer_role == listener_role == auth.STMGR


def test_a_blocking_dialer_over_a_unix_socket():
    address = f"\0heronbridge-test-auth-unix-{os.getpid()}"  # one per process: xdist

    def client():
        with socket.socket(socket.AF_UNIX) as sock:
            sock.connect(address)
            auth.dial_sync(sock, SECRET, auth.TASK, auth.Identity.unix("t-1", "stmgr-1",
                                                                       address))
            sock.sendall(control_frame(hello()))
            return sock.recv(1024)

    async def main():
        server, _ = await serve({auth.TASK}, unix=address)
        reply = await asyncio.to_thread(client)
        server.close()
        return reply

    assert run(main()) == control_frame(hello())
    assert auth.peer_uid(socket.socketpair(socket.AF_UNIX)[0]) is not None


@pytest.mark.parametrize("case", ["wrong secret", "forged proof", "wrong role", "garbage",
                                  "silence", "other uid"])
def test_the_listener_refuses_and_logs_and_never_builds_the_protocol(case, caplog,
                                                                      monkeypatch):
    monkeypatch.setattr(auth, "HANDSHAKE_SECS", 0.5)
    address = f"\0heronbridge-test-auth-refuse-{os.getpid()}"

    def client():
        with socket.socket(socket.AF_UNIX) as sock:
            sock.connect(address)
            if case == "garbage":
                sock.sendall(control_frame(hello()))
            elif case == "forged proof":
                sock.sendall(auth._hello(auth.TASK, b"n" * auth.NONCE, auth.Identity.unix(
                    "t-1", "stmgr-1", address)))
                assert len(sock.recv(1024)) == auth._CHALLENGE
                sock.sendall(b"p" * auth.MAC)
            elif case != "silence":
                secret = b"x" * 32 if case == "wrong secret" else SECRET
                role = auth.CLI if case == "wrong role" else auth.TASK
                with pytest.raises(auth.AuthError):
                    auth.dial_sync(sock, secret, role, auth.Identity.unix("t-1", "stmgr-1",
                                                                          address))
            sock.settimeout(5)
            try:
                return sock.recv(1024)
            except ConnectionResetError:
                return b""

    async def main():
        server, _ = await serve({auth.TASK}, unix=address)
        if case == "other uid":
            real = auth.os.getuid()
            monkeypatch.setattr(auth.os, "getuid", lambda: real + 1)
        reply = await asyncio.to_thread(client)
        server.close()
        return reply

    with caplog.at_level(logging.WARNING, "heronbridge.runtime.auth"):
        reply = run(main())
    assert reply == b""  # closed with nothing said
    assert not Recorder.made  # no frame was ever read
    # A dialer with the wrong secret finds out first (the listener proves itself first),
    # sends no proof of its own, and the listener gives up on it.
    reason = {"wrong secret": "no handshake within", "forged proof": "wrong proof",
              "wrong role": "expected a dialer among",
              "garbage": "expected a handshake", "silence": "no handshake within",
              "other uid": "expected a peer of uid"}[case]
    assert any("refused a connection from" in r.message and reason in r.message
               for r in caplog.records), caplog.text


@pytest.mark.parametrize("case", ["right", "wrong secret", "forged proof", "wrong role",
                                  "wrong identity", "garbage", "silence"])
def test_a_blocking_listener_reads_nothing_before_the_dialer_proved_the_secret(case):
    """accept_sync (a task's grouping link): the handshake over a Unix socket pair; only
    a dialer of the right role, for this identity, with the secret, gets through."""
    import threading

    ours = auth.Identity.unix("t-1", "grouping-3", "/tmp/x/link")
    listening, dialling = socket.socketpair(socket.AF_UNIX)
    outcome: list = []

    def listener():
        try:
            outcome.append(auth.accept_sync(listening, SECRET, frozenset({auth.GROUPING}),
                                            ours, timeout=0.5)[0])
        except auth.AuthError as exc:
            outcome.append(exc)
        listening.close()

    thread = threading.Thread(target=listener)
    thread.start()
    with dialling:
        if case == "garbage":
            dialling.sendall(control_frame(hello()))
        elif case == "forged proof":
            dialling.sendall(auth._hello(auth.GROUPING, b"n" * auth.NONCE, ours))
            assert len(dialling.recv(1024)) == auth._CHALLENGE
            dialling.sendall(b"p" * auth.MAC)
        elif case != "silence":
            secret = b"x" * 32 if case == "wrong secret" else SECRET
            role = auth.TASK if case == "wrong role" else auth.GROUPING
            other = auth.Identity.unix("t-1", "grouping-4", "/tmp/x/link")
            try:
                auth.dial_sync(dialling, secret, role, other if case == "wrong identity"
                               else ours)
            except auth.AuthError:
                assert case != "right"
        thread.join(5)
    reason = {"right": None, "wrong secret": "no handshake within",
              "forged proof": "wrong proof", "wrong role": "expected a dialer among",
              "wrong identity": "expected a dialer of grouping-3",
              "garbage": "expected a handshake", "silence": "no handshake within"}[case]
    if reason is None:
        assert outcome == [auth.GROUPING]
    else:
        assert isinstance(outcome[0], auth.AuthError) and reason in str(outcome[0]), outcome


def test_a_dialer_refuses_a_listener_that_cannot_prove_the_secret():
    async def main():
        server, port = await serve(secret=b"y" * 32)  # an impostor
        with pytest.raises(auth.AuthError, match="did not prove"):
            await auth.dial(FramedProtocol, SECRET, auth.STMGR, me(port))
        server.close()

    run(main())


def test_mutual_tls_with_the_topologys_ca(tmp_path):
    ca = CertificateAuthority(tmp_path / "ca")
    cert, key = ca.issue("127.0.0.1")
    listen_ctx, dial_ctx = tls.contexts((str(cert), str(key), str(ca.path)))
    other = CertificateAuthority(tmp_path / "other", "another CA")
    stranger = tls.contexts((*map(str, other.issue("127.0.0.1")), str(ca.path)))[1]

    async def main():
        server, port = await serve(context=listen_ctx)
        transport, link = await auth.dial(FramedProtocol, SECRET, auth.STMGR, me(port),
                                          ssl_context=dial_ctx)
        assert transport.get_extra_info("peercert") is not None
        transport.close()
        with pytest.raises((ssl.SSLError, auth.AuthError, ConnectionError)):
            await auth.dial(FramedProtocol, SECRET, auth.STMGR, me(port),
                            ssl_context=stranger)  # a certificate the CA did not sign
        with pytest.raises((auth.AuthError, ConnectionError)):
            await auth.dial(FramedProtocol, SECRET, auth.STMGR, me(port))
        server.close()

    run(main())
    assert len(Recorder.made) == 1
