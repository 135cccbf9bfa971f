"""A pystorm ReliableSpout with its defaults, a Java relay (javamix.RelayBolt: anchored
re-emit, then ack) and a Python sink that writes every id it sees."""

from bolts.sink import SinkBolt
from spouts.ids import IdSpout
from streamparse import Grouping, JavaBolt, Topology


class JavaRelay(Topology):
    ids = IdSpout.spec()
    relay = JavaBolt.spec(full_class_name="javamix.RelayBolt", args_list=["id", "key"],
                          inputs={ids: Grouping.SHUFFLE}, par=2, outputs=["id", "key"])
    sink = SinkBolt.spec(inputs={relay: Grouping.fields("key")}, par=2)
