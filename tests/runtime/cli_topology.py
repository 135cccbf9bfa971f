"""A topology file for the command-line tests (`heronbridge run tests/runtime/cli_topology.py`)."""

from rt_components import KeySpout, RecordingBolt

from heronbridge.runtime import TopologyBuilder

builder = TopologyBuilder("cli-test", {"topology.reliability.mode": "ATLEAST_ONCE",
                                       "test.count": 10**9, "test.interval": 0.001})
keys = builder.spout("keys", KeySpout)
builder.bolt("record", RecordingBolt, inputs=[keys])
