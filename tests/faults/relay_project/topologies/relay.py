"""The shape of issue 25's project: a ReliableSpout with pystorm's defaults, a relay
that re-emits each tuple (auto-anchor, auto-ack), a sink that appends every id it sees
to a file."""

from bolts.relay import RelayBolt, SinkBolt
from spouts.ids import IdSpout
from streamparse import Grouping, Topology


class Relay(Topology):
    ids = IdSpout.spec()
    relay = RelayBolt.spec(inputs={ids: Grouping.SHUFFLE}, par=3)
    sink = SinkBolt.spec(inputs={relay: Grouping.fields("key")}, par=3)
