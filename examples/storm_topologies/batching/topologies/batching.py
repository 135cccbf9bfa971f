"""
Tick-driven batching with a BatchingBolt.
"""

from streamparse import Grouping, Topology

from bolts.totals import CategoryTotalsBolt
from spouts.records import RecordSpout


class Batching(Topology):
    records = RecordSpout.spec()
    totals = CategoryTotalsBolt.spec(
        inputs={records: Grouping.fields("category")},
        par=2,
        config={"topology.tick.tuple.freq.secs": 1},
    )
