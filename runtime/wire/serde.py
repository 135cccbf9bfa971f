"""Value serializers: how a batch of value lists becomes bytes and back.

`json` gives what Storm's multilang shows a component (tuples arrive as lists, dict keys
as strings); `msgpack` is the same data model, smaller and faster; `pickle` carries any
Python object between processes of one trusted host.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from dataclasses import dataclass

import msgspec


@dataclass(frozen=True)
class Serializer:
    name: str
    encode: Callable[[list], bytes]
    decode: Callable[[bytes | memoryview], list]
    # A decoder straight into a msgspec Struct type (array-like records), where the
    # format allows it: a batch then becomes objects without a Python-level loop.
    typed: Callable[[type], Callable[[bytes | memoryview], list]] | None = None


def _pickle_dumps(values: list) -> bytes:
    return pickle.dumps(values, protocol=5)


def make_serializer(name: str) -> Serializer:
    if name == "msgpack":
        return Serializer(name, msgspec.msgpack.Encoder().encode, msgspec.msgpack.Decoder().decode,
                          lambda cls: msgspec.msgpack.Decoder(list[cls]).decode)
    if name == "json":
        return Serializer(name, msgspec.json.Encoder().encode, msgspec.json.Decoder().decode,
                          lambda cls: msgspec.json.Decoder(list[cls]).decode)
    if name == "pickle":
        return Serializer(name, _pickle_dumps, pickle.loads)
    msg = f"expected a serializer among ('msgpack', 'json', 'pickle'), received {name!r}"
    raise ValueError(msg)
