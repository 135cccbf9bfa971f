from parts.bolts import CrashBolt, PassBolt, SoftCrashBolt
from parts.spouts import NumberSpout
from streamparse import Topology


class Crashing(Topology):
    numbers = NumberSpout.spec()
    hard = CrashBolt.spec(inputs=[numbers])
    soft = SoftCrashBolt.spec(inputs=[numbers])
    calm = PassBolt.spec(inputs=[numbers])
