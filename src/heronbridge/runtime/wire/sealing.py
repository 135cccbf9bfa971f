"""The record layer: every frame after the handshake, on a TCP link, is authenticated.

A sender seals what it writes at once (one or more whole frames) into one record:

    <u32 n> <payload: n bytes of whole frames> <tag: 16 bytes>
    tag = HMAC-SHA256(key, <u64 seq> <u32 n> payload)[:16]

with its direction's key from the handshake (wire.auth) and `seq` counting that
direction's records from 0. The sequence number is not sent: the receiver counts too, so
a record replayed, reordered, dropped or carried over from another connection fails its
tag, and so does any byte an attacker changed or added. A record is verified before any
frame in it is looked at. The spec, with test vectors, is PROTOCOL.md beside this file.
"""

from __future__ import annotations

import hashlib
import hmac
import struct
from typing import Any

from .frames import MAX_FRAME, BadFrame, Reassembler, split_frames

TAG = 16
RECORD_HEADER = 4
MAX_RECORD = MAX_FRAME + 4  # one frame of the largest size, with its length prefix
_LENGTH = struct.Struct("<I")
_SEQ_LENGTH = struct.Struct("<QI")


class ForgedRecord(BadFrame):
    """A record whose tag is wrong: not sent by the authenticated peer, or not in order."""


def derive(secret: bytes, transcript: bytes) -> tuple[bytes, bytes]:
    """(dialer-to-listener key, listener-to-dialer key) of one handshake."""
    session = hmac.digest(secret, _label(b"session") + transcript, "sha256")
    return (hmac.digest(session, _label(b"dialer->listener"), "sha256"),
            hmac.digest(session, _label(b"listener->dialer"), "sha256"))


def _label(text: bytes) -> bytes:
    return len(text).to_bytes(2, "little") + text


class Sealer:
    """Seals one direction's writes."""

    __slots__ = ("_base", "seq")

    def __init__(self, key: bytes) -> None:
        self._base = hmac.new(key, digestmod=hashlib.sha256)
        self.seq = 0

    def seal(self, chunks: list[Any]) -> list[Any]:
        """The chunks (whole frames, any bytes-like) as records, ready for writelines."""
        size = sum(map(len, chunks))
        if size > MAX_RECORD:
            return [part for group in _groups(chunks) for part in self.seal(group)]
        head = _SEQ_LENGTH.pack(self.seq, size)
        self.seq += 1
        mac = self._base.copy()
        mac.update(head)
        for chunk in chunks:
            mac.update(chunk)
        return [head[8:], *chunks, mac.digest()[:TAG]]

    def seal_bytes(self, data: bytes) -> bytes:
        return b"".join(self.seal([data]))


def _groups(chunks: list[Any]) -> list[list[Any]]:
    """Split a write into groups of at most MAX_RECORD bytes, on chunk (frame) bounds."""
    groups: list[list[Any]] = [[]]
    size = 0
    for chunk in chunks:
        if size + len(chunk) > MAX_RECORD and groups[-1]:
            groups.append([])
            size = 0
        groups[-1].append(chunk)
        size += len(chunk)
    return groups


class SealedAssembler(Reassembler):
    """The receiving side: FrameAssembler's `feed`, over records. Returns the frames of
    every whole record that verified; raises ForgedRecord (a BadFrame: the frames of the
    records before it still count) at the first that does not."""

    __slots__ = ("_base", "seq")

    def __init__(self, key: bytes) -> None:
        super().__init__()
        self._base = hmac.new(key, digestmod=hashlib.sha256)
        self.seq = 0

    def feed(self, chunk: bytes) -> tuple[bytes, list[tuple[int, int, int, int]]]:
        data = self._take(chunk)
        if data is None:
            return b"", []
        view = memoryview(data)
        found: list[tuple[int, int, int, int]] = []
        pos, size = 0, len(data)
        while size - pos >= RECORD_HEADER:
            (n,) = _LENGTH.unpack_from(data, pos)
            if not 0 < n <= MAX_RECORD:
                msg = (f"expected a record of 1 to {MAX_RECORD} bytes, received length {n} "
                       f"(record {self.seq})")
                raise ForgedRecord(msg, data, found)
            end = pos + RECORD_HEADER + n
            if end + TAG > size:
                break
            mac = self._base.copy()
            mac.update(_SEQ_LENGTH.pack(self.seq, n))
            mac.update(view[pos + RECORD_HEADER:end])
            if not hmac.compare_digest(mac.digest()[:TAG], view[end:end + TAG]):
                msg = (f"record {self.seq} failed authentication (forged, replayed, "
                       "reordered or altered)")
                raise ForgedRecord(msg, data, found)
            self.seq += 1
            try:
                frames, used = split_frames(data, pos + RECORD_HEADER, end)
            except BadFrame as exc:
                raise BadFrame(str(exc), data, found + exc.found) from None
            if used != end:
                msg = f"record {self.seq - 1} does not end on a frame boundary"
                raise BadFrame(msg, data, found + frames)
            found += frames
            pos = end + TAG
        if pos < size:
            self._keep(data[pos:], RECORD_HEADER, TAG)
        return data, found
