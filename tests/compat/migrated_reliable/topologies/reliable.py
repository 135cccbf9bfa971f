"""
At-least-once processing with a ReliableSpout and explicit acks and fails.
"""

from bolts.checker import CheckerBolt
from heronpy.api.stream import Grouping
from heronpy.api.topology import Topology
from spouts.numbers import NumberSpout


class Reliable(Topology):
    config = {"topology.reliability.mode": "ATLEAST_ONCE"}
    numbers = NumberSpout.spec()
    checker = CheckerBolt.spec(inputs={numbers: Grouping.SHUFFLE}, par=1)
