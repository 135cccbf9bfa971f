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


@pytest.mark.compat("api/bytes values (as UTF-8 text)", on="multilang")
def test_bytes_a_msgpack_child_emits_are_carried_as_the_text_they_hold():
    """pystorm's msgpack serializer sends bytes as msgpack's bin; the emit carries them as
    its JSON serializer (and Storm) would: UTF-8 text, whatever the topology's serializer."""
    import msgpack
    from test_peer_release import Host

    from heronbridge.shims.common.peer import StormPeer

    [msg] = MsgpackFraming().feed(msgpack.packb(
        {"command": "emit", "anchors": [], "tuple": [b"dog", {"k": [b"v", 1]}]},
        use_bin_type=True))
    assert msg["tuple"][0] == b"dog"  # as the child sent it
    for serializer in ("msgpack", "pickle"):
        peer = StormPeer(Host(**{"heronbridge.serializer": serializer}), pystorm=True)
        peer.receive(msg)
        assert peer.collector.emitted == [(["dog", {"k": ["v", 1]}], [])]
    with pytest.raises(UnicodeDecodeError):  # not UTF-8: refused as pystorm's encoder does
        peer.receive({"command": "emit", "tuple": [b"\xff"]})
