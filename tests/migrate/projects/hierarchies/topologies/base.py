"""A base bolt and its subclasses, each fed by the spout."""

from streamparse import Grouping, Topology

from bolts.base import Tagging
from bolts.derived import Doubling, Early, Inherited, Keyword, Logged, Plain, Quadrupling, Tripling
from spouts.numbers import Numbers


class Base(Topology):
    numbers = Numbers.spec()
    tagging = Tagging.spec(inputs=[numbers], par=2)
    doubling = Doubling.spec(inputs={numbers: Grouping.fields("n")}, par=2)
    tripling = Tripling.spec(inputs=[numbers])
    quadrupling = Quadrupling.spec(inputs=[numbers], par=2)
    keyword = Keyword.spec(inputs=[numbers])
    early = Early.spec(inputs=[numbers])
    inherited = Inherited.spec(inputs=[numbers])
    logged = Logged.spec(inputs=[numbers])
    plain = Plain.spec(inputs=[numbers])
    sink = Tagging.spec(inputs=[tagging, doubling, tripling, quadrupling, keyword, early,
                                inherited, logged, plain])
