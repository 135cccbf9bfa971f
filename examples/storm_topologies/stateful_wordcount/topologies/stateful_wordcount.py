"""
A word count whose counts stay exact when a process dies: its spout and its counting
bolt keep what they must not lose in a state saved with each checkpoint.
"""

from streamparse import Grouping, Topology

from bolts.words import CountBolt, SplitBolt
from spouts.lines import LineSpout


class StatefulWordCount(Topology):
    # Heron's keys, which Storm ignores: on Storm this topology is at least once.
    config = {"topology.reliability.mode": "EFFECTIVELY_ONCE",
              "topology.stateful.checkpoint.interval.secs": 5}

    lines = LineSpout.spec()
    split = SplitBolt.spec(inputs={lines: Grouping.SHUFFLE}, par=2)
    count = CountBolt.spec(inputs={split: Grouping.fields("word")}, par=2)
