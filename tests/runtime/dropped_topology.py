"""A topology file for the test of dropped frames (`heronbridge run` it): at-least-once
with message timeouts off; one bolt task dies once, mid-run, and frames routed to it
while it is down are dropped."""

from fault_components import DiesOnceBolt, PausingSpout

from heronbridge.runtime import Grouping, TopologyBuilder

COUNT = 600

builder = TopologyBuilder("dropped", {
    "topology.reliability.mode": "ATLEAST_ONCE", "topology.enable.message.timeouts": False,
    "test.count": COUNT, "test.interval": 0.002, "test.pause.at": 100, "test.die.at": 100,
    "heronbridge.restart.backoff.secs": 0.5})
seqs = builder.spout("seqs", PausingSpout)
builder.bolt("record", DiesOnceBolt, inputs={seqs: Grouping.SHUFFLE}, par=2)
