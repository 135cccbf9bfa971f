from parts.bolts import PassBolt, ProbeBolt
from parts.spouts import NumberSpout
from streamparse import Topology


class TaskIds(Topology):
    numbers = NumberSpout.spec()
    probe = ProbeBolt.spec(inputs=[numbers])
    sink = PassBolt.spec(inputs=[probe["probe"]], par=3)
