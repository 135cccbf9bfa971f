"""
The same, routed to the echo tasks by a direct stream.
"""

from streamparse import Grouping, Topology

from bolts.mixed import EchoBolt, RouterBolt
from spouts.numbers import NumberSpout


class Routed(Topology):
    numbers = NumberSpout.spec()
    router = RouterBolt.spec(inputs=[numbers])
    echo = EchoBolt.spec(inputs={router["routed"]: Grouping.DIRECT}, par=2)
