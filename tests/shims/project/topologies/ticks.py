from parts.bolts import GroupBatchBolt, TickBolt, TimedBatchBolt
from parts.spouts import NumberSpout
from streamparse import Topology


class Ticks(Topology):
    numbers = NumberSpout.spec()
    ticker = TickBolt.spec(inputs=[numbers], config={"topology.tick.tuple.freq.secs": 1})
    batches = GroupBatchBolt.spec(inputs=[numbers], config={"topology.tick.tuple.freq.secs": 1})
    timed = TimedBatchBolt.spec(inputs=[numbers])
