"""The handshake a multilang component gets is the one Storm gives it.

The expected contexts were observed from Storm 2.8.4 in local mode (a Python probe
component dumping what it received) for spout -> bolt, fields grouping, ackers = 1; the
shell bolt and spout code is unchanged up to 2.8.8.
"""

from __future__ import annotations

from heronbridge.runtime import Grouping, Stream, TopologyBuilder
from heronbridge.runtime.api import TopologyContext
from heronbridge.shims.common.handshake import handshake

SPOUT, BOLT = "probe:Spout", "probe:Bolt"  # class paths only: nothing is imported here

STORM_BOLT_CONTEXT = {
    "componentid": "bolt", "streams": ["default"], "stream->target->grouping": {},
    "stream->outputfields": {"default": ["a", "b"]},
    "source->stream->grouping": {"spout": {"default": {"type": "FIELDS", "fields": ["word"]}}},
    "task->component": {"1": "__acker", "2": "bolt", "3": "spout"},
    "source->stream->fields": {"spout": {"default": ["word", "n"]}}, "taskid": 2,
}
STORM_SPOUT_CONTEXT = {
    "componentid": "spout", "streams": ["default"],
    "stream->target->grouping": {"default": {"bolt": {"type": "FIELDS", "fields": ["word"]}}},
    "stream->outputfields": {"default": ["word", "n"]}, "source->stream->grouping": {},
    "task->component": {"1": "__acker", "2": "bolt", "3": "spout"},
    "source->stream->fields": {}, "taskid": 3,
}


def plan():
    b = TopologyBuilder("probe-clean", {"topology.max.spout.pending": 100,
                                        "my.topology.key": "x"})
    b.spout("spout", SPOUT, outputs=["word", "n"])
    b.bolt("bolt", BOLT, inputs={"spout": Grouping.by_fields("word")},
           outputs=["a", "b"])
    b.reserve("__acker", 1)
    return b.build()


def test_bolt_and_spout_contexts_match_storms():
    p = plan()
    bolt = handshake(TopologyContext.build(p, "probe-clean-1", 2), "/pids", is_spout=False)
    spout = handshake(TopologyContext.build(p, "probe-clean-1", 3), "/pids", is_spout=True)
    assert bolt["context"] == STORM_BOLT_CONTEXT
    assert spout["context"] == STORM_SPOUT_CONTEXT
    assert bolt["pidDir"] == "/pids"


def test_conf_carries_storms_keys_and_the_spouts_tick_quirk():
    p = plan()
    bolt = handshake(TopologyContext.build(p, "probe-clean-1", 2), "/pids", is_spout=False)
    spout = handshake(TopologyContext.build(p, "probe-clean-1", 3), "/pids", is_spout=True)
    assert bolt["conf"]["topology.name"] == "probe-clean"
    assert bolt["conf"]["storm.id"] == "probe-clean-1"
    assert bolt["conf"]["my.topology.key"] == "x"
    assert bolt["conf"]["topology.tick.tuple.freq.secs"] is None
    assert spout["conf"]["topology.tick.tuple.freq.secs"] == 30  # the message timeout
    assert not any(k.startswith("heronbridge.") for k in bolt["conf"])


def test_every_grouping_is_spelled_as_storms_thrift_enum():
    b = TopologyBuilder("g")
    b.spout("s", SPOUT, outputs=[Stream("default", ("k", "n")),
                                    Stream("d", ("k",), direct=True)])
    for name, grouping in (("f", Grouping.by_fields("k")), ("gl", Grouping.GLOBAL),
                           ("sh", Grouping.SHUFFLE), ("al", Grouping.ALL),
                           ("no", Grouping.NONE), ("lo", Grouping.LOCAL_OR_SHUFFLE),
                           ("pk", Grouping.partial_key("k"))):
        b.bolt(name, BOLT, inputs={"s": grouping})
    b.bolt("di", BOLT, inputs={"s:d": Grouping.DIRECT})
    p = b.build()
    tasks = {name: t for t, name in TopologyContext.build(p, "g", 1).task_to_component.items()}
    spout = handshake(TopologyContext.build(p, "g", tasks["s"]), "/p", True)["context"]
    assert spout["stream->target->grouping"] == {
        "default": {"f": {"type": "FIELDS", "fields": ["k"]},
                    "gl": {"type": "FIELDS", "fields": []}, "sh": {"type": "SHUFFLE"},
                    "al": {"type": "ALL"}, "no": {"type": "NONE"},
                    "lo": {"type": "LOCAL_OR_SHUFFLE"}, "pk": {"type": "CUSTOM_SERIALIZED"}},
        "d": {"di": {"type": "DIRECT"}}}
    bolt = handshake(TopologyContext.build(p, "g", tasks["f"]), "/p", False)["context"]
    assert bolt["source->stream->fields"] == {"s": {"default": ["k", "n"], "d": ["k"]}}
