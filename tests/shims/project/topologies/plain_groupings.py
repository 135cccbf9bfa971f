from parts.bolts import DroppingBolt, SeenBolt
from parts.spouts import NumberSpout
from streamparse import Grouping, Topology


class PlainGroupings(Topology):
    """groupings.py without what heronpy lacks (direct streams, Storm's Java groupings),
    for its migrated copy."""

    numbers = NumberSpout.spec()
    shuffled = SeenBolt.spec(inputs={numbers: Grouping.SHUFFLE}, par=2)
    fielded = SeenBolt.spec(inputs={numbers: Grouping.fields("n")}, par=2)
    everyone = SeenBolt.spec(inputs={numbers: Grouping.ALL}, par=2)
    globaled = SeenBolt.spec(inputs={numbers: Grouping.GLOBAL}, par=2)
    noned = SeenBolt.spec(inputs={numbers: Grouping.NONE}, par=2)
    localed = SeenBolt.spec(inputs={numbers: Grouping.LOCAL_OR_SHUFFLE}, par=2)
    dropper = DroppingBolt.spec(inputs={numbers: Grouping.SHUFFLE})
