from parts.bolts import DirectBolt, ErringDroppingBolt, SeenBolt
from parts.spouts import BytesSpout, NumberSpout
from streamparse import Grouping, Topology

PARTIAL_KEY = Grouping.custom_object("org.apache.storm.grouping.PartialKeyGrouping", [])


class Groupings(Topology):
    """A subscriber per grouping, a direct stream, and a bolt whose unacked tuples time out
    (run with a small topology.max.spout.pending); and a spout that emits bytes."""

    numbers = NumberSpout.spec()
    shuffled = SeenBolt.spec(inputs={numbers: Grouping.SHUFFLE}, par=2)
    fielded = SeenBolt.spec(inputs={numbers: Grouping.fields("n")}, par=2)
    everyone = SeenBolt.spec(inputs={numbers: Grouping.ALL}, par=2)
    globaled = SeenBolt.spec(inputs={numbers: Grouping.GLOBAL}, par=2)
    noned = SeenBolt.spec(inputs={numbers: Grouping.NONE}, par=2)
    localed = SeenBolt.spec(inputs={numbers: Grouping.LOCAL_OR_SHUFFLE}, par=2)
    partialed = SeenBolt.spec(inputs={numbers: PARTIAL_KEY}, par=2)
    router = DirectBolt.spec(inputs={numbers: Grouping.SHUFFLE})
    sink = SeenBolt.spec(inputs={router["routed"]: Grouping.DIRECT}, par=2)
    dropper = ErringDroppingBolt.spec(inputs={numbers: Grouping.SHUFFLE})
    raw = BytesSpout.spec()
    texted = SeenBolt.spec(inputs={raw: Grouping.SHUFFLE})
