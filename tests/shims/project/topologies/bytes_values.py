from parts.bolts import ReprSink
from parts.spouts import BytesSpout
from streamparse import Topology


class BytesValues(Topology):
    values = BytesSpout.spec()
    sink = ReprSink.spec(inputs=[values])
