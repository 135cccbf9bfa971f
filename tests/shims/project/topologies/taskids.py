from parts.bolts import ProbeBolt, SeenBolt
from parts.spouts import NumberSpout
from streamparse import Topology


class TaskIds(Topology):
    numbers = NumberSpout.spec()
    probe = ProbeBolt.spec(inputs=[numbers])
    sink = SeenBolt.spec(inputs=[probe["probe"]], par=3)
