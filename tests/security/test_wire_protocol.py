"""The link protocol (runtime/wire/PROTOCOL.md): its test vectors recomputed from the
spec alone, the record layer against replay, reordering, loss, tampering and reflection,
a relayed handshake refused at both ends, and frame lengths capped as soon as known."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import socket
import struct
from pathlib import Path

import pytest
from test_auth import Recorder

from heronbridge.runtime.proto import control_pb2
from heronbridge.runtime.wire import auth, frames, sealing
from heronbridge.runtime.wire.aio import FramedProtocol
from heronbridge.runtime.wire.frames import BadFrame, FrameAssembler, control_frame

VECTORS = Path(auth.__file__).with_name("protocol_vectors.json")
SECRET = b"k" * 32


def field(raw: bytes) -> bytes:
    return struct.pack("<H", len(raw)) + raw


def mac(key: bytes, message: bytes) -> bytes:
    return hmac.new(key, message, hashlib.sha256).digest()


@pytest.mark.parametrize("case", json.loads(VECTORS.read_text())["cases"],
                         ids=lambda c: c["role"])
def test_the_vectors_follow_from_the_spec_and_the_implementation_gives_them(case):
    secret, nd, nl = (bytes.fromhex(case[k]) for k in ("secret", "nonce_d", "nonce_l"))
    ident = case["identity"]
    identity = b"".join(field(ident[k].encode()) for k in ("topology", "name", "address"))
    role = case["role"].encode()
    # From PROTOCOL.md, with hmac and struct only:
    transcript = b"HBA2" + field(role) + field(identity) + nd + nl
    session = mac(secret, field(b"session") + transcript)
    expected = {
        "identity_bytes": identity,
        "hello": b"HBA2" + bytes((len(role),)) + role + nd + field(identity),
        "transcript": transcript,
        "proof_l": mac(secret, field(b"listener") + transcript),
        "proof_d": mac(secret, field(b"dialer") + transcript),
        "k_dl": mac(session, field(b"dialer->listener")),
        "k_ld": mac(session, field(b"listener->dialer")),
    }
    for key, value in expected.items():
        assert case[key] == value.hex(), key
    assert case["challenge"] == (b"HBA2" + nl + expected["proof_l"]).hex()
    for record in case["records"]:
        key = expected["k_dl" if record["direction"] == "dialer->listener" else "k_ld"]
        payload = b"".join(bytes.fromhex(f) for f in record["frames"])
        tag = mac(key, struct.pack("<QI", record["seq"], len(payload)) + payload)[:16]
        assert record["record"] == (struct.pack("<I", len(payload)) + payload + tag).hex()
    # ... and the implementation gives the same bytes.
    mine = auth.Identity(ident["topology"], ident["name"], ident["address"])
    assert auth._hello(case["role"], nd, mine).hex() == case["hello"]
    said = auth.transcript(case["role"], mine.encode(), nd, nl)
    assert said.hex() == case["transcript"]
    assert [k.hex() for k in sealing.derive(secret, said)] == [case["k_dl"], case["k_ld"]]
    assert mine.sealed == case["sealed"] == ident["address"].startswith("tcp:")


def sealed_pair():
    k_dl, _ = sealing.derive(SECRET, b"transcript")
    return sealing.Sealer(k_dl), sealing.SealedAssembler(k_dl)


def ack(n):
    return frames.int_frame(frames.ACK, 0, [n, n])


def records(sealer, count):
    return [b"".join(sealer.seal([ack(i), ack(i + 100)])) for i in range(count)]


def test_records_round_trip_split_anywhere():
    sealer, opener = sealed_pair()
    stream = b"".join(records(sealer, 5))
    got = []
    for i in range(len(stream)):  # one byte per read
        data, found = opener.feed(stream[i:i + 1])
        got += [bytes(data[s:e]) for _, _, s, e in found]
    assert got == [f for i in range(5) for f in (ack(i), ack(i + 100))]


@pytest.mark.parametrize("attack", ["replay", "reorder", "drop", "flip a bit", "inject",
                                    "reflect", "other connection"])
def test_a_record_out_of_place_fails_and_what_came_before_it_stands(attack):
    sealer, opener = sealed_pair()
    good = records(sealer, 3)
    if attack == "replay":
        stream = [good[0], good[1], good[0]]
    elif attack == "reorder":
        stream = [good[0], good[2], good[1]]
    elif attack == "drop":
        stream = [good[0], good[2]]
    elif attack == "flip a bit":
        bad = bytearray(good[1])
        bad[10] ^= 1
        stream = [good[0], bytes(bad)]
    elif attack == "inject":  # a raw frame, as before the record layer
        stream = [good[0], ack(666), ack(667)]
    elif attack == "reflect":  # the other direction's record, sealed with its key
        _, k_ld = sealing.derive(SECRET, b"transcript")
        other = sealing.Sealer(k_ld)
        other.seq = 1
        stream = [good[0], b"".join(other.seal([ack(1), ack(101)]))]
    else:  # the same position in another session
        other = sealing.Sealer(sealing.derive(SECRET, b"another transcript")[0])
        stream = [good[0], records(other, 2)[1]]
    with pytest.raises(BadFrame) as raised:
        opener.feed(b"".join(stream))
    stood = 2 if attack == "replay" else 1  # the records before the bad one
    assert [bytes(raised.value.data[s:e]) for *_, s, e in raised.value.found] == \
        [f for i in range(stood) for f in (ack(i), ack(i + 100))]


def test_a_record_or_frame_length_is_capped_once_its_four_bytes_are_known():
    _, opener = sealed_pair()
    with pytest.raises(sealing.ForgedRecord, match="record of 1 to"):
        opener.feed(struct.pack("<I", 0xFFFFFFF0))
    # A frame header split across reads: the length alone is enough to refuse it.
    assembler = FrameAssembler()
    assembler.feed(b"\xf0\xff")
    with pytest.raises(BadFrame, match="length"):
        assembler.feed(b"\xff\xff")
    assembler = FrameAssembler()
    with pytest.raises(BadFrame, match="length"):
        assembler.feed(struct.pack("<I", frames.MAX_FRAME + 1) + b"\x01")
    # A whole 100 MB header, as before.
    with pytest.raises(BadFrame):
        FrameAssembler().feed(frames.HEADER.pack(100 << 20, frames.DATA, 1))


# -- a relayed handshake ---------------------------------------------------------------


async def listener(name):
    Recorder.made = []
    factory = auth.listen(Recorder, SECRET, {auth.STMGR}, name)
    server = await asyncio.get_running_loop().create_server(factory, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    factory.identity = auth.Identity.tcp("t-1", name, "127.0.0.1", port)
    return server, factory.identity


async def relay(target_port, rewrite=None, inject=None):
    """A server that pipes each connection to target_port, optionally rewriting the
    dialer's first message and injecting bytes after the handshake."""

    async def handle(reader, writer):
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", target_port)

        async def pipe(src, dst, first=None, last=None):
            try:
                data = await src.read(4096)
                if first is not None and data:
                    data = first(data)
                while data:
                    dst.write(data)
                    await dst.drain()
                    data = await src.read(4096)
                if last:
                    dst.write(last)
                    await dst.drain()
            except ConnectionError:
                pass
            finally:
                dst.close()

        down = asyncio.ensure_future(pipe(up_reader, writer))
        await pipe(reader, up_writer, rewrite, inject)
        await down

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


def test_a_handshake_relayed_to_another_listener_fails_at_both_ends(caplog, monkeypatch):
    monkeypatch.setattr(auth, "HANDSHAKE_SECS", 1.0)

    async def main():
        live, live_identity = await listener("stmgr-2")
        outcomes = []
        for rewrite in (None, "identity"):
            # The attacker holds the port a dead stmgr-1 had; a peer redials it.
            def swap(hello, ours=live_identity):
                dead = auth._parse_hello(hello)
                return hello[:dead[3] - len(dead[2]) - 2] + auth._field(ours.encode())
            proxy, port = await relay(live_identity.address.rsplit(":", 1)[1],
                                      swap if rewrite else None)
            dead = auth.Identity.tcp("t-1", "stmgr-1", "127.0.0.1", port)
            with pytest.raises(auth.AuthError) as raised:
                await auth.dial(FramedProtocol, SECRET, auth.STMGR, dead)
            outcomes.append(str(raised.value))
            await asyncio.sleep(1.5)  # the live listener's handshake timer
            proxy.close()
        live.close()
        return outcomes

    with caplog.at_level(logging.WARNING, "heronbridge.runtime.auth"):
        outcomes = asyncio.run(main())
    # Unchanged, the live listener refuses a hello meant for another identity; with the
    # identity rewritten, the dialer refuses the live listener's proof (made for it).
    assert "closed the connection during the handshake" in outcomes[0]
    assert "did not prove the topology's secret for stmgr-1" in outcomes[1]
    assert not Recorder.made  # the live listener never took a frame
    refusals = [r.message for r in caplog.records if "refused a connection" in r.message]
    assert any("expected a dialer of stmgr-2" in m and "received one for stmgr-1" in m
               for m in refusals), refusals


def test_an_on_path_relay_passes_the_handshake_but_nothing_it_adds(caplog):
    """A relay on the path to the right listener (the handshake then holds) cannot add,
    replay or change a frame: the listener closes the link at the first forged record."""
    notice = control_pb2.BackPressureNotice(stmgr_id="stmgr-1", active=True)
    forged = control_frame(notice)

    async def main():
        live, identity = await listener("stmgr-2")
        proxy, port = await relay(identity.address.rsplit(":", 1)[1], inject=forged * 3)

        def dial_through():
            with socket.create_connection(("127.0.0.1", port), 5) as sock:
                session = auth.dial_sync(sock, SECRET, auth.STMGR, identity)
                sock.sendall(session.sealer.seal_bytes(control_frame(notice)))
                sock.shutdown(socket.SHUT_WR)  # the relay now injects its frame
                sock.settimeout(5)
                return sock.recv(100)

        reply = await asyncio.to_thread(dial_through)
        await asyncio.sleep(0.5)
        live.close()
        proxy.close()
        return reply

    with caplog.at_level(logging.WARNING):
        reply = asyncio.run(main())
    assert reply == b""
    [link] = Recorder.made
    assert len(link.messages) == 1  # the dialer's own notice, not the injected copy
    assert "failed authentication" in caplog.text, caplog.text
