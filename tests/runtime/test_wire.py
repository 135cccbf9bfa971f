"""Frames and control messages."""

from __future__ import annotations

import pytest

from heronbridge.runtime.errors import ProtocolError
from heronbridge.runtime.proto import control_pb2
from heronbridge.runtime.wire import frames


def test_frames_split_across_arbitrary_reads():
    stream = b"".join([
        frames.data_frame(3, 1, 0, b"x" * 1000),
        frames.int_frame(frames.ACK, 0, [5, 6, 7, 8]),
        frames.control_frame(control_pb2.StreamManagerHello(topology_id="t", stmgr_id="s")),
    ] * 3)
    for size in (1, 7, 64, 1001, len(stream)):
        assembler = frames.FrameAssembler()
        kinds = []
        for i in range(0, len(stream), size):
            data, found = assembler.feed(stream[i:i + size])
            for kind, dest, start, end in found:
                kinds.append(kind)
                if kind == frames.CONTROL:
                    msg = frames.parse_control(memoryview(data)[start:end])
                    assert msg.stmgr_id == "s"
                elif kind == frames.ACK:
                    body = memoryview(data)[start + frames.HEADER_SIZE:end]
                    assert frames.ints_from(body).tolist() == [5, 6, 7, 8]
                else:
                    assert dest == 3
        assert kinds == [frames.DATA, frames.ACK, frames.CONTROL] * 3


def test_a_bad_frame_is_refused_with_what_was_expected():
    with pytest.raises(ProtocolError, match=r"expected a frame \(kind in .*received kind 99"):
        frames.split_frames(b"\x05\x00\x00\x00\x63\x00\x00\x00\x00")


def test_an_unknown_control_message_type_is_refused():
    frame = frames.control_frame(control_pb2.Status(ok=True))
    bad = frame.replace(b"heronbridge.runtime.Status", b"heronbridge.runtime.Nope__")
    with pytest.raises(ProtocolError, match="unknown message type"):
        frames.parse_control(bad)
