"""
An at-least-once word count over a durable log whose offset is committed on ack.
"""

from streamparse import Grouping, Topology

from bolts.words import CountBolt, SplitBolt
from spouts.log import LogSpout


class Durable(Topology):
    log = LogSpout.spec()
    split = SplitBolt.spec(inputs={log: Grouping.SHUFFLE}, par=2)
    count = CountBolt.spec(inputs={split: Grouping.fields("word")}, par=2)
