"""The JVM task host's link, attacked as tests/security attacks the Python instance's: the
host process, started as the executor starts it (its secret through an inherited pipe),
dials a listener that does not hold the secret, a relay that hands its handshake to a live
stream manager (as it is, and with the identity rewritten), and a relay on the path of a
sound handshake that then adds a forged record. Each time the host exits to be restarted
and nothing it did not authenticate is taken by either side."""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path

import pytest

from heronbridge.jvm.host import host_jar
from heronbridge.jvm.storm import storm_jars
from heronbridge.runtime.proto import control_pb2
from heronbridge.runtime.wire import auth, sealing
from heronbridge.runtime.wire.aio import FramedProtocol
from heronbridge.runtime.wire.frames import control_frame

pytestmark = [pytest.mark.jvm, pytest.mark.integration]

SECRET = b"k" * 32
TOPOLOGY_ID, CONTAINER = "t-1", 2
STMGR = f"stmgr-{CONTAINER}"
EXIT_LOST_STREAM_MANAGER = 3  # Task.EXIT_LOST_STREAM_MANAGER: the executor restarts it


LINKS: list[FramedProtocol] = []  # every link a listener here accepted, in order


def recorder() -> FramedProtocol:
    """A stream manager's side of a link that passed the handshake: it keeps what it was
    sent (`messages`) and answers nothing."""
    link = FramedProtocol()
    link.messages = []  # type: ignore[attr-defined]
    link.message_received = link.messages.append  # type: ignore[attr-defined,method-assign]
    LINKS.append(link)
    return link


@pytest.fixture(scope="module")
def classpath(storm_home) -> str:
    return os.pathsep.join(str(p) for p in (host_jar(), *storm_jars(storm_home)))


async def host(classpath: str, port: int, tmp_path: Path) -> tuple[int, str]:
    """Run one JVM task host dialing 127.0.0.1:port: (exit code, what it wrote)."""
    fd, env = auth.secret_pipe(SECRET)
    try:
        proc = await asyncio.create_subprocess_exec(
            "java", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", classpath,
            "heronbridge.jvm.TaskHost", "--topology-id", TOPOLOGY_ID, "--task", "1",
            "--container", str(CONTAINER), "--stmgr", f"127.0.0.1:{port}",
            "--metrics", str(tmp_path / "no-metrics.sock"), "--code-dir", str(tmp_path),
            env={**os.environ, **env}, pass_fds=(fd,), stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT)
    finally:
        os.close(fd)
    out, _ = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode, out.decode(errors="replace")


async def listener(secret: bytes):
    """A stream manager's listener for the host's task role: (server, port, factory),
    the factory's identity naming that port."""
    LINKS.clear()
    factory = auth.listen(recorder, secret, {auth.TASK}, STMGR)
    server = await asyncio.get_running_loop().create_server(factory, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    factory.identity = tcp_identity(port)
    return server, port, factory


def tcp_identity(port: int) -> auth.Identity:
    return auth.Identity.tcp(TOPOLOGY_ID, STMGR, "127.0.0.1", port)


def test_a_listener_without_the_secret_gets_no_proof_and_no_frame(classpath, tmp_path,
                                                                   caplog):
    async def main():
        server, port, _ = await listener(b"y" * 32)  # an impostor at the stream manager's port
        try:
            return await host(classpath, port, tmp_path)
        finally:
            server.close()

    with caplog.at_level(logging.WARNING, "heronbridge.runtime.auth"):
        code, out = asyncio.run(main())
    assert code == EXIT_LOST_STREAM_MANAGER, out
    assert "did not prove" in out, out
    assert not LINKS  # the impostor never had a link: no registration, no frame


@pytest.mark.parametrize("rewrite", [False, True], ids=["as-is", "identity-rewritten"])
def test_a_relayed_handshake_fails(classpath, tmp_path, caplog, monkeypatch, rewrite):
    """The attacker holds the port the host dials and pipes it to a live stream manager
    (right secret, its own port): as it is, the live one refuses a hello meant for another
    address; with the identity rewritten to the live one's, the host refuses a proof made
    for another identity."""
    monkeypatch.setattr(auth, "HANDSHAKE_SECS", 2.0)

    async def main():
        live, live_port, factory = await listener(SECRET)
        live_identity = factory.identity

        def swap(hello: bytes) -> bytes:
            dialed = auth._parse_hello(hello)
            assert dialed is not None, hello
            return hello[:dialed[3] - len(dialed[2]) - 2] + auth._field(live_identity.encode())

        proxy, port = await forwarder(live_port, swap if rewrite else None)
        try:
            return await host(classpath, port, tmp_path)
        finally:
            await asyncio.sleep(0.2)
            proxy.close()
            live.close()

    with caplog.at_level(logging.WARNING, "heronbridge.runtime.auth"):
        code, out = asyncio.run(main())
    assert code == EXIT_LOST_STREAM_MANAGER, out
    if rewrite:
        assert "did not prove" in out, out
    else:
        assert "closed the connection during the handshake" in out, out
        refusals = [r.message for r in caplog.records if "refused a connection" in r.message]
        assert refusals, caplog.text
    assert not LINKS  # the live stream manager never took a frame


def test_a_forged_record_after_a_sound_handshake_ends_the_link(classpath, tmp_path):
    """A forwarder on the path (the live listener's identity names the port the host
    dials) passes the handshake, then adds a record of its own toward the host: the host
    refuses it by its tag and exits, having registered nothing it did not send."""
    notice = control_frame(control_pb2.BackPressureNotice(stmgr_id=STMGR, active=True))
    forged = sealing.Sealer(b"x" * 32).seal_bytes(notice)  # a record's shape, not its tag

    def registered() -> bool:
        return bool(LINKS and LINKS[0].messages)

    async def main():
        live, live_port, factory = await listener(SECRET)
        proxy, port = await forwarder(live_port, inject=forged, when=registered)
        factory.identity = tcp_identity(port)  # the live one is known by the port dialed
        try:
            return await host(classpath, port, tmp_path)
        finally:
            proxy.close()
            live.close()

    code, out = asyncio.run(main())
    assert code == EXIT_LOST_STREAM_MANAGER, out
    assert "failed its tag" in out, out
    [link] = LINKS  # the handshake held: the host's own registration came through
    assert [type(m).__name__ for m in link.messages] == ["RegisterInstanceRequest"]


async def forwarder(target: int, rewrite=None, inject: bytes = b"", when=None):
    """(server, port): pipes each connection to 127.0.0.1:`target`, the dialer's first
    chunk through `rewrite` when given; once `when()` holds, sends the dialer `inject`
    as if the listener had."""

    async def handle(reader, writer):
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", target)

        async def pipe(src, dst, first=None) -> None:
            while data := await src.read(4096):
                dst.write(first(data) if first else data)
                first = None
                await dst.drain()

        async def forge() -> None:
            while inject and not when():
                await asyncio.sleep(0.05)
            writer.write(inject)
            await writer.drain()

        try:
            await asyncio.gather(pipe(up_reader, writer), pipe(reader, up_writer, rewrite),
                                 forge())
        except ConnectionError:
            pass
        finally:
            writer.close()
            up_writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]
