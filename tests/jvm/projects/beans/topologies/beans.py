"""A Java spout emitting Java beans (jvmtests.beans.Reading), Characters, infinite floats
and a Float, Short, Byte and BigDecimal to a Java bolt, which checks each arrived as it
was, and to a Python bolt, which writes the JSON it got."""

from bolts.record import RecordBolt
from streamparse import Grouping, JavaBolt, JavaSpout, Topology


class Beans(Topology):
    readings = JavaSpout.spec(full_class_name="jvmtests.beans.ReadingSpout", args_list=[],
                              outputs=["reading", "id", "symbol", "ratio", "extremes",
                                       "numbers"])
    check = JavaBolt.spec(full_class_name="jvmtests.beans.ReadingCheckBolt", args_list=[],
                          inputs={readings: Grouping.SHUFFLE}, par=2, outputs=[])
    record = RecordBolt.spec(inputs={readings: Grouping.SHUFFLE})
