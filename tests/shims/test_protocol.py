"""Storm's multilang framing, as the host reads and writes it."""

import json
import math

import pytest

from heronbridge.shims.storm import ShimError
from heronbridge.shims.storm.protocol import JsonFraming, MsgpackFraming


def test_json_messages_split_anywhere_come_out_whole_and_in_order():
    stream = b"".join(JsonFraming.encode({"command": "emit", "tuple": [n, "w\u00e9"]})
                      for n in range(50))
    framing = JsonFraming()
    got = []
    for i in range(0, len(stream), 7):  # chunk edges fall inside bodies and terminators
        got += framing.feed(stream[i:i + 7])
    assert got == [{"command": "emit", "tuple": [n, "w\u00e9"]} for n in range(50)]


def test_json_empty_and_blank_messages_are_skipped():
    framing = JsonFraming()
    assert framing.feed(b'end\n\n{"a": 1}\nend\nend\n\n  \nend\n{"b": ') == [{"a": 1}]
    assert framing.feed(b'2}\nend\n') == [{"b": 2}]


def test_json_non_finite_floats_travel_as_python_writes_them():
    data = JsonFraming.encode({"tuple": [math.inf, -math.inf, None, 1.5]})
    assert data == (json.dumps({"tuple": [math.inf, -math.inf, None, 1.5]},
                               separators=(",", ":")) + "\nend\n").encode()
    [msg] = JsonFraming().feed(b'{"command": "emit", "tuple": [NaN, Infinity]}\nend\n')
    assert math.isnan(msg["tuple"][0]) and msg["tuple"][1] == math.inf


def test_json_garbage_names_what_was_received():
    with pytest.raises(ShimError, match="expected a JSON message before 'end'.*hello there"):
        JsonFraming().feed(b"hello there\nend\n")


def test_msgpack_messages_split_anywhere_come_out_whole():
    framing = MsgpackFraming()
    stream = b"".join(framing.encode({"command": "sync", "n": n}) for n in range(20))
    got = []
    for i in range(0, len(stream), 5):
        got += framing.feed(stream[i:i + 5])
    assert got == [{"command": "sync", "n": n} for n in range(20)]
