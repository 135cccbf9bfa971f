"""The json serializer: Python's JSON semantics whichever encoder writes a batch."""

import enum
import json
import math
from collections import OrderedDict, namedtuple

import msgspec
import pytest

from heronbridge.runtime.wire.serde import make_serializer


class Colour(enum.IntEnum):
    RED = 1


class Name(str):
    pass


Point = namedtuple("Point", "x y")

BATCHES = [
    [["word"], ["count", 3], ("tuple", None, True, False)],
    [["lines", 0, 12345, None, "ember maple"]],
    [[1.5, -0.0, 5e-324, 1e300, 2**70, -(2**63)]],
    [[{"a": [1, 2.5, "x"], "b": {"c": None}}, [1, [2, [3]]]]],
    [[math.nan, 1.0], [math.inf], [-math.inf, "x"]],
    [[Colour.RED, Name("n"), Point(1, 2), OrderedDict(a=1)]],
    [[{1: "int key", None: "none key", False: "bool key", 2.5: "float key"}]],
    [["é ü 中文 \u2028"]],
    [],
    # What the emitters send: each tuple's values, then its root and edge (or none).
    [(["word", 3], 2**62 + 5, 7), (["w", 1.5],), ((None, True), 1, 2)],
    [(["x", math.nan], 1, 2)],
    [([[1, 2], "deeper"], 1, 2)],
    [([{"a": 1}], 1, 2)],
    [([math.inf],)],
]


@pytest.mark.parametrize("batch", BATCHES, ids=range(len(BATCHES)))
def test_a_batch_decodes_as_pythons_json_wrote_it(batch):
    blob = make_serializer("json").encode(batch)
    expected = json.loads(json.dumps(batch))
    got = json.loads(blob)
    assert repr(got) == repr(expected)  # repr: NaN compares unequal to itself
    assert repr(make_serializer("json").decode(blob)) == repr(expected)


def test_nan_and_infinities_arrive_as_themselves_through_the_typed_decoder():
    class Rec(msgspec.Struct, array_like=True):
        a: object
        b: object

    ser = make_serializer("json")
    out = ser.typed(Rec)(ser.encode([[math.nan, math.inf], [1.5, -math.inf]]))
    assert math.isnan(out[0].a) and out[0].b == math.inf and out[1].b == -math.inf


@pytest.mark.parametrize("value", [{1, 2}, frozenset({3}), bytearray(b"x"),
                                   msgspec.Struct, object()],
                         ids=["set", "frozenset", "bytearray", "class", "object"])
def test_what_pythons_json_refuses_is_refused(value):
    with pytest.raises(TypeError):
        make_serializer("json").encode([["ok"], [value]])


def test_bytes_travel_as_the_utf8_text_they_hold_as_pystorms_encoder_writes_them():
    import simplejson  # pystorm's encoder, which a multilang component's values cross

    batch = [([b"dog", {"k": [b"caf\xc3\xa9"], b"key": b""}], 1, 2), (["plain"],)]
    ser = make_serializer("json")
    got = ser.decode(ser.encode(batch))
    assert got == json.loads(simplejson.dumps(batch)) == \
        [[["dog", {"k": ["café"], "key": ""}], 1, 2], [["plain"]]]
    with pytest.raises(UnicodeDecodeError):  # as simplejson: bytes that are not UTF-8
        ser.encode([[b"\xff"]])


def test_a_lone_surrogate_is_refused():
    with pytest.raises(UnicodeEncodeError):
        make_serializer("json").encode([["\udc80"]])


def test_a_circular_value_is_refused():
    loop: list = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular"):
        make_serializer("json").encode([[loop]])
