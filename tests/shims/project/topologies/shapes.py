from parts.bolts import ReprSink, ShapeBolt
from parts.spouts import NumberSpout
from streamparse import Topology


class Shapes(Topology):
    numbers = NumberSpout.spec()
    shape = ShapeBolt.spec(inputs=[numbers])
    sink = ReprSink.spec(inputs=[shape])
