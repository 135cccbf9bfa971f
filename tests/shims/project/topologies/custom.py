from parts.bolts import SeenBolt
from parts.spouts import NumberSpout
from streamparse import Grouping, Topology

# Storm's shuffle as the CustomStreamGrouping object it also is (customGrouping).
SHUFFLE_OBJECT = Grouping.custom_object("org.apache.storm.grouping.ShuffleGrouping", [])


class Custom(Topology):
    numbers = NumberSpout.spec()
    customed = SeenBolt.spec(inputs={numbers: SHUFFLE_OBJECT}, par=2)
