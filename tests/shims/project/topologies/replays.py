from parts.bolts import RejectBolt
from parts.spouts import RetryingSpout
from streamparse import Topology


class Replays(Topology):
    numbers = RetryingSpout.spec()
    judge = RejectBolt.spec(inputs=[numbers])
