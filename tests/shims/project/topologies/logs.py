from parts.bolts import LoggingBolt
from parts.spouts import NumberSpout
from streamparse import Topology


class Logs(Topology):
    numbers = NumberSpout.spec()
    talker = LoggingBolt.spec(inputs=[numbers])
