"""Value serializers: how a batch of value lists becomes bytes and back.

`json` gives what Storm's multilang shows a component: Python's JSON semantics, as
pystorm's own encoder (simplejson) writes them: tuples arrive as lists, dict keys as
strings, NaN stays NaN, bytes as the UTF-8 text they hold (a Kafka client's values), and
a set, or bytes that are not UTF-8, is refused. `msgpack` is the same data model, smaller
and faster; `pickle` carries any Python object between processes of one trusted host.
"""

from __future__ import annotations

import json
import pickle
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

import msgspec

from ..errors import ConfigError, where

Decode = Callable[[bytes | memoryview], list]

# A Java value that is not JSON-like, in Storm's Kryo bytes: only a Java task sends it, and
# only to another Java task (jvm/.../values/StormKryo.java); any other task is sent what
# Storm's multilang JSON makes of the value, as Storm gives a ShellBolt's subprocess.
KRYO_EXT = 75


def _no_ext(code: int, data: memoryview) -> object:
    what = ("a Java value in Storm's Kryo bytes, which only a Java task reads" if code == KRYO_EXT
            else "a msgpack extension value, which no runtime serializer writes")
    msg = (f"expected JSON-like values (what Storm's multilang gives a task that is not Java), "
           f"received {what} (extension type {code}, {len(data)} bytes)")
    raise ValueError(msg)


@dataclass(frozen=True)
class Serializer:
    name: str
    encode: Callable[[list], bytes]
    decode: Decode
    # A decoder straight into a msgspec Struct type (array-like records), where the
    # format allows it: a batch then becomes objects without a Python-level loop.
    typed: Callable[[type], Callable[[bytes | memoryview], list]] | None = None


def _pickle_dumps(values: list) -> bytes:
    return pickle.dumps(values, protocol=5)


def _bytes_as_text(value: object) -> str:
    """pystorm's encoder writes bytes as the UTF-8 text they hold (bytes that are not
    UTF-8 raise, as there)."""
    if isinstance(value, bytes):
        return value.decode("utf-8")
    msg = f"Object of type {type(value).__name__} is not JSON serializable"
    raise TypeError(msg)


def _text_keys(value: object) -> object:
    """`value` with its dicts' bytes keys as text (json's `default` never sees a key)."""
    if isinstance(value, dict):
        return {(k.decode("utf-8") if isinstance(k, bytes) else k): _text_keys(v)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_text_keys(v) for v in value]
    return value


_json_encode = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False,
                                default=_bytes_as_text).encode


def _json_text(records: list) -> str:
    try:
        return _json_encode(records)
    except TypeError as exc:
        if "keys must be" not in str(exc):
            raise
        return _json_encode(_text_keys(records))


_json_fast = msgspec.json.Encoder().encode
_SEQUENCES = frozenset({list, tuple})
_PLAIN = frozenset({str, int, bool, type(None)})


def _plain(records: list) -> bool:
    """Whether every record is a sequence of plain values and sequences of them (a
    tuple's values, then its root and edge), its floats finite: what msgspec writes as
    Python's encoder does. msgspec would write a NaN as null, and take bytes, sets and
    dataclasses, which Python's encoder refuses."""
    sequences, plain = _SEQUENCES, _PLAIN
    for record in records:
        if record.__class__ not in sequences:
            return False
        for value in record:
            cls = value.__class__
            if cls in plain or (cls is float and value - value == 0.0):  # not NaN nor inf
                continue
            if cls not in sequences:
                return False
            for item in value:
                kind = item.__class__
                if kind not in plain and (kind is not float or item - item != 0.0):
                    return False
    return True


def _json_dumps(records: list) -> bytes:
    """Python's JSON semantics at msgspec's speed: a plain batch through msgspec, anything
    else (deeper containers, a dict, a NaN, what JSON refuses) through Python's encoder."""
    return _json_fast(records) if _plain(records) else _json_text(records).encode()


def _json_typed(cls: type) -> Callable[[bytes | memoryview], list]:
    fast = msgspec.json.Decoder(list[cls]).decode  # type: ignore[valid-type]

    def decode(blob: bytes | memoryview) -> list:
        try:
            return fast(blob)
        except msgspec.DecodeError:  # NaN or Infinity: JSON as Python writes it
            return [cls(*record) for record in json.loads(bytes(blob))]
    return decode


def make_serializer(name: str, topology: str | None = None) -> Serializer:
    if name == "msgpack":
        # The stream manager's decode (the roots of a dropped frame) leaves an extension value
        # as it is; a task's typed decode refuses it, naming what it received.
        return Serializer(name, msgspec.msgpack.Encoder().encode, msgspec.msgpack.Decoder().decode,
                          lambda cls: msgspec.msgpack.Decoder(
                              list[cls], ext_hook=_no_ext).decode)  # type: ignore[valid-type]
    if name == "json":
        return Serializer(name, _json_dumps, cast("Decode", json.loads), _json_typed)
    if name == "pickle":
        return Serializer(name, _pickle_dumps, pickle.loads)
    msg = (f"{where(topology)}: expected a serializer among ('msgpack', 'json', 'pickle'), "
           f"received {name!r}")
    raise ConfigError(msg)
