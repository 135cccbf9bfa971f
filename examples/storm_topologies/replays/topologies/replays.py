"""
Replays over a shuffle: how often an id is replayed depends on where it lands.
"""

from streamparse import Grouping, Topology

from bolts.first_sight import FirstSightBolt
from spouts.numbers import NumberSpout


class Replays(Topology):
    numbers = NumberSpout.spec()
    first_sight = FirstSightBolt.spec(inputs={numbers: Grouping.SHUFFLE}, par=2)
