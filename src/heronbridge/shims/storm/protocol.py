"""Storm's multilang framing: JSON documents each followed by a line `end`, or (with a
msgpack serializer, as pystorm's) a plain stream of msgpack objects."""

from __future__ import annotations

import json
from typing import Any

import msgspec

from . import ShimError


class JsonFraming:
    """msgspec's JSON where it gives what Python's json module would, that module where
    it does not: NaN and the infinities, which Python children write and expect back."""

    name = "json"

    def __init__(self) -> None:
        self._rest = b""

    @staticmethod
    def encode(msg: Any) -> bytes:
        data = _encode(msg)
        if b"null" in data:  # msgspec writes a non-finite float as null; json keeps it
            data = json.dumps(msg, separators=(",", ":")).encode()
        return data + b"\nend\n"

    def feed(self, chunk: bytes) -> list[Any]:
        """The whole messages completed by `chunk`: each is the lines before a line `end`."""
        buf = self._rest + chunk if self._rest else chunk
        out = []
        pos = 0
        while True:
            if buf.startswith(b"end\n", pos):  # an empty message
                pos += 4
                continue
            end = buf.find(b"\nend\n", pos)
            if end < 0:
                break
            body = buf[pos:end]
            pos = end + 5
            if not body.strip():
                continue
            try:
                out.append(_decode(body))
            except msgspec.DecodeError:
                out.append(_decode_python(body))
        self._rest = buf[pos:]
        return out


_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder().decode


def _decode_python(body: bytes) -> Any:
    try:
        return json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        msg = f"expected a JSON message before 'end', received {body!r}"
        raise ShimError(msg) from exc


class MsgpackFraming:
    name = "msgpack"

    def __init__(self) -> None:
        import msgpack

        self._msgpack = msgpack
        self._unpacker = msgpack.Unpacker(raw=False)

    def encode(self, msg: Any) -> bytes:
        return self._msgpack.packb(msg, use_bin_type=True)

    def feed(self, chunk: bytes) -> list[Any]:
        self._unpacker.feed(chunk)
        return list(self._unpacker)


def framing(serializer: str) -> JsonFraming | MsgpackFraming:
    return MsgpackFraming() if serializer == "msgpack" else JsonFraming()
