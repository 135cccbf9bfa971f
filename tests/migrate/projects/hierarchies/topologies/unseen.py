"""A bolt whose base the codemod cannot see."""

from streamparse import Topology

from bolts.base import Tagging
from bolts.reported import Reported
from spouts.numbers import Numbers


class Unseen(Topology):
    numbers = Numbers.spec()
    reported = Reported.spec(inputs=[numbers], par=2)
    sink = Tagging.spec(inputs=[reported])
