"""Storm's multilang framing: JSON documents each followed by a line `end`, or (with a
msgpack serializer, as pystorm's) a plain stream of msgpack objects."""

from __future__ import annotations

import json
from typing import Any

from . import ShimError


class JsonFraming:
    name = "json"

    def __init__(self) -> None:
        self._lines: list[str] = []
        self._rest = ""

    @staticmethod
    def encode(msg: Any) -> bytes:
        return (json.dumps(msg) + "\nend\n").encode()

    def feed(self, chunk: bytes) -> list[Any]:
        """The whole messages completed by `chunk`."""
        text = self._rest + chunk.decode()
        *lines, self._rest = text.split("\n")
        out = []
        for line in lines:
            if line == "end":
                body = "\n".join(self._lines)
                self._lines = []
                if body.strip():
                    try:
                        out.append(json.loads(body))
                    except json.JSONDecodeError as exc:
                        msg = f"expected a JSON message before 'end', received {body!r}"
                        raise ShimError(msg) from exc
            elif line:
                self._lines.append(line)
        return out


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
