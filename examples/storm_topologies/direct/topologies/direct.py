"""
Direct grouping, and task ids returned by emit.
"""

from streamparse import Grouping, Topology

from bolts.receivers import MirrorBolt, SinkBolt
from bolts.router import RouterBolt
from spouts.numbers import NumberSpout


class Direct(Topology):
    numbers = NumberSpout.spec()
    router = RouterBolt.spec(inputs={numbers: Grouping.SHUFFLE}, par=1)
    mirror = MirrorBolt.spec(inputs={router["probe"]: Grouping.SHUFFLE}, par=3)
    sink = SinkBolt.spec(inputs={router["routed"]: Grouping.DIRECT}, par=3)
