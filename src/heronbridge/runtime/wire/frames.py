"""Frames on the runtime's sockets.

Every frame starts with the same 9 bytes: `<u32 length><u8 kind><u32 dest>`, where
`length` counts the bytes after itself. A stream manager routes on those 9 bytes alone
and forwards the rest untouched; only the receiving instance decodes tuple values.

Data frames:  header + `<u32 src><u16 stream>`, then the serialized list of records,
              one per tuple: [values] untracked, [values, root, edge] tracked, or
              [values, -1, [0, root, edge, ...]] for a tuple with several roots.
Ack frames:   int64 (root, xor) pairs; init frames likewise; fail, acked, failed and
              expired frames: int64 roots.
Control:      `<u8 name_len><protobuf full name><protobuf bytes>`.
Marker:       `<u32 src>` then the checkpoint id (ASCII): a checkpoint barrier from task
              `src`, routed like data, so it follows everything `src` sent before it.

Integers are little-endian; int64 arrays travel in the host's order, byte-swapped on
big-endian hosts.
"""

from __future__ import annotations

import struct
import sys
from array import array

from google.protobuf.message import Message

from ..errors import ProtocolError
from ..proto import control_pb2, plans_pb2, topology_pb2

DATA = 1
ACK = 2  # bolt -> stream manager: (root, xor) pairs, routed by the root's spout task
FAIL = 3  # bolt -> stream manager: roots
INIT = 4  # spout -> its stream manager: (root, xor of first edges) pairs
ACKED = 5  # stream manager -> spout: roots whose tree completed
FAILED = 6  # stream manager -> spout: roots a bolt failed
EXPIRED = 7  # stream manager -> spout: roots whose message timeout passed
CONTROL = 8
MARKER = 9  # task -> downstream task, through stream managers (effectively-once)

KIND_NAMES = {DATA: "data", ACK: "ack", FAIL: "fail", INIT: "init", ACKED: "acked",
              FAILED: "failed", EXPIRED: "expired", CONTROL: "control", MARKER: "marker"}

HEADER = struct.Struct("<IBI")
DATA_HEADER = struct.Struct("<IBIIH")
MARKER_HEADER = struct.Struct("<IBII")
HEADER_SIZE = HEADER.size
DATA_HEADER_SIZE = DATA_HEADER.size
MAX_FRAME = 64 << 20

_SWAP = sys.byteorder == "big"

# Roots carry their spout's task id in the high bits, so anyone can route an ack.
ROOT_TASK_SHIFT = 40
ROOT_SEQ_MASK = (1 << ROOT_TASK_SHIFT) - 1


def ints_to_bytes(values: list[int] | array) -> bytes:
    arr = values if isinstance(values, array) else array("q", values)
    if _SWAP:
        arr = array("q", arr)
        arr.byteswap()
    return arr.tobytes()


def ints_from(buf: memoryview | bytes) -> array:
    arr = array("q")
    arr.frombytes(buf)
    if _SWAP:
        arr.byteswap()
    return arr


def data_frame(dest: int, src: int, stream: int, records: bytes) -> bytes:
    return DATA_HEADER.pack(DATA_HEADER_SIZE - 4 + len(records), DATA, dest, src,
                            stream) + records


def marker_frame(dest: int, src: int, checkpoint_id: str) -> bytes:
    body = checkpoint_id.encode("ascii")
    return MARKER_HEADER.pack(MARKER_HEADER.size - 4 + len(body), MARKER, dest, src) + body


def parse_marker(frame: memoryview | bytes) -> tuple[int, str]:
    """(source task, checkpoint id) of a whole marker frame."""
    _, _, _, src = MARKER_HEADER.unpack_from(frame)
    return src, bytes(frame[MARKER_HEADER.size:]).decode("ascii")


def int_frame(kind: int, dest: int, ints: list[int] | array) -> bytes:
    body = ints_to_bytes(ints)
    return HEADER.pack(HEADER_SIZE - 4 + len(body), kind, dest) + body


_CONTROL_TYPES: dict[str, type[Message]] = {}
for _module in (control_pb2, plans_pb2, topology_pb2):
    for _desc in _module.DESCRIPTOR.message_types_by_name.values():
        _CONTROL_TYPES[_desc.full_name] = getattr(_module, _desc.name)


def control_frame(message: Message, dest: int = 0) -> bytes:
    name = message.DESCRIPTOR.full_name.encode()
    body = message.SerializeToString()
    return b"".join((HEADER.pack(HEADER_SIZE - 4 + 1 + len(name) + len(body), CONTROL, dest),
                     bytes((len(name),)), name, body))


def parse_control(frame: memoryview | bytes) -> Message:
    """Decode the protobuf message of a whole control frame (header included)."""
    name_len = frame[HEADER_SIZE]
    start = HEADER_SIZE + 1
    name = bytes(frame[start:start + name_len]).decode()
    cls = _CONTROL_TYPES.get(name)
    if cls is None:
        msg = f"control frame names unknown message type {name!r}"
        raise ProtocolError(msg)
    message = cls()
    message.ParseFromString(bytes(frame[start + name_len:]))
    return message


class BadFrame(ProtocolError):
    """A malformed frame header: the stream cannot be followed past it. `data` and
    `found` hold the whole frames that came before it, for the receiver to keep."""

    def __init__(self, message: str, data: bytes, found: list) -> None:
        super().__init__(message)
        self.data = data
        self.found = found


def split_frames(data: bytes, pos: int = 0,
                 size: int | None = None) -> tuple[list[tuple[int, int, int, int]], int]:
    """Find the complete frames in `data[pos:size]`.

    Returns ([(kind, dest, start, end), ...], consumed): each frame spans
    data[start:end] including its length prefix; data[consumed:size] is an incomplete
    frame. Raises BadFrame at a malformed header, or at a length over MAX_FRAME as soon as
    its 4 bytes are there.
    """
    frames: list[tuple[int, int, int, int]] = []
    unpack = HEADER.unpack_from
    size = len(data) if size is None else size
    while size - pos >= HEADER_SIZE:
        length, kind, dest = unpack(data, pos)
        end = pos + 4 + length
        if length > MAX_FRAME or kind not in KIND_NAMES:
            msg = (f"expected a frame (kind in {sorted(KIND_NAMES)}, length <= {MAX_FRAME}), "
                   f"received kind {kind} length {length} at byte {pos} of a read")
            raise BadFrame(msg, data, frames)
        if end > size:
            break
        frames.append((kind, dest, pos, end))
        pos = end
    if size - pos >= 4 and int.from_bytes(data[pos:pos + 4], "little") > MAX_FRAME:
        msg = (f"expected a frame of length <= {MAX_FRAME}, received length "
               f"{int.from_bytes(data[pos:pos + 4], 'little')} at byte {pos} of a read")
        raise BadFrame(msg, data, frames)
    return frames, pos


class Reassembler:
    """A byte stream's unit that may span reads: what is kept until `_need` bytes are
    there."""

    __slots__ = ("_need", "_parts", "_size")

    def __init__(self) -> None:
        self._parts: list[bytes] = []
        self._size = 0
        self._need = 0

    def _take(self, chunk: bytes) -> bytes | None:
        """The kept bytes and `chunk`, or None while fewer than needed are there."""
        if not self._parts:
            return chunk
        self._parts.append(chunk)
        self._size += len(chunk)
        if self._size < self._need:
            return None
        chunk = b"".join(self._parts)
        self._parts, self._size = [], 0
        return chunk

    def _keep(self, rest: bytes, header: int, extra: int) -> None:
        """Keep an incomplete unit: its `u32` length (once known) plus `header` plus
        `extra` bytes are needed; until then, the 4 bytes that say it."""
        self._parts, self._size = [rest], len(rest)
        self._need = (int.from_bytes(rest[:4], "little") + header + extra
                      if len(rest) >= 4 else 4)


class FrameAssembler(Reassembler):
    """Turns a byte stream into whole frames; a frame may span any number of reads."""

    __slots__ = ()

    def feed(self, chunk: bytes) -> tuple[bytes, list[tuple[int, int, int, int]]]:
        """Add a chunk; return (data, frames) where frames index into data."""
        data = self._take(chunk)
        if data is None:
            return b"", []
        found, used = split_frames(data)
        if used < len(data):
            self._keep(data[used:], 4, 0)
        return data, found
