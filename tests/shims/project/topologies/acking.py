from parts.bolts import PassBolt, RejectBolt
from parts.spouts import NumberSpout
from streamparse import Grouping, Topology


class Acking(Topology):
    numbers = NumberSpout.spec()
    passing = PassBolt.spec(inputs={numbers: Grouping.fields("n")}, par=2)
    judge = RejectBolt.spec(inputs=[passing])
