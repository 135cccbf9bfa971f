"""The spout and the slow bolt at parallelism 1 (see README.md)."""

from streamparse import Grouping, Topology

from bolts.slow import SlowBolt
from spouts.offered import OfferedSpout


class Slow(Topology):
    source = OfferedSpout.spec()
    work = SlowBolt.spec(inputs={source: Grouping.SHUFFLE}, par=1)
