"""The spout and the slow bolt at parallelism 1 (see README.md)."""

from streamparse import Grouping, Topology

from bolts.slow import SlowBolt
from spouts.offered import EmptySpout


class Slow(Topology):
    source = EmptySpout.spec()
    work = SlowBolt.spec(inputs={source: Grouping.SHUFFLE}, par=1)
