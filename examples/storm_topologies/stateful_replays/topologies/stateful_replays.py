"""
A word count whose counting bolt fails the first sighting of each word: on Storm the
failed lines are replayed and counted again; under checkpoints the counts stay exact.
"""

from streamparse import Grouping, Topology

from bolts.words import CountBolt, SplitBolt
from spouts.lines import LineSpout


class StatefulReplays(Topology):
    # Heron's keys, which Storm ignores: on Storm this topology is at least once.
    config = {"topology.reliability.mode": "EFFECTIVELY_ONCE",
              "topology.stateful.checkpoint.interval.secs": 1}

    lines = LineSpout.spec()
    split = SplitBolt.spec(inputs={lines: Grouping.SHUFFLE}, par=2)
    count = CountBolt.spec(inputs={split: Grouping.fields("word")}, par=2)
