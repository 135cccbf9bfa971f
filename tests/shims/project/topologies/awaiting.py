from parts.bolts import AwaitingBolt
from parts.spouts import NumberSpout
from streamparse import Topology


class Awaiting(Topology):
    numbers = NumberSpout.spec()
    # No tick frequency: only the runtime's wake-ups (or multilang wake ticks) ack.
    waiting = AwaitingBolt.spec(inputs=[numbers],
                                config={"heronbridge.multilang.wake.secs": 0.01})
