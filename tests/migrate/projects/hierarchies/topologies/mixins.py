"""Components made of mixins."""

from streamparse import Topology

from bolts.mixed import CountedTagging, Described
from spouts.numbers import Numbers


class Mixins(Topology):
    numbers = Numbers.spec()
    described = Described.spec(inputs=[numbers], par=2)
    counted = CountedTagging.spec(inputs=[numbers])
    sink = Described.spec(inputs=[described, counted])
