"""
At-least-once processing with a ReliableSpout and explicit acks and fails.
"""

from streamparse import Grouping, Topology

from bolts.checker import CheckerBolt
from spouts.numbers import NumberSpout


class Reliable(Topology):
    numbers = NumberSpout.spec()
    checker = CheckerBolt.spec(inputs={numbers: Grouping.SHUFFLE}, par=1)
