"""
What pystorm tells a component about itself, read by a spout and a plain bolt.
"""

from streamparse import Grouping, Topology

from bolts.mixed import EchoBolt
from spouts.numbers import NumberSpout


class Attributes(Topology):
    numbers = NumberSpout.spec()
    echo = EchoBolt.spec(inputs={numbers: Grouping.fields("n")}, par=2)
