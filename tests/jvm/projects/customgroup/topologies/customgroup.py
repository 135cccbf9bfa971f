"""Python spout -> Python bolt (3 tasks) through a Java custom grouping (a JavaObject with
an argument, as Storm's customGrouping takes it)."""

from parts.values import SeenBolt, ValueSpout
from streamparse import Grouping, Topology

TYPED = Grouping.custom_object("jvmtests.TypedModGrouping", [1])


class CustomGroup(Topology):
    values = ValueSpout.spec()
    seen = SeenBolt.spec(inputs={values: TYPED}, par=3)
