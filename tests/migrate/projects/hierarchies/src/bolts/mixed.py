"""Components made of mixins and a base bolt of another module."""

from streamparse import Bolt

from bolts.base import Tagging
from bolts.mixins import Counting, Describing


class Described(Describing, Bolt):
    outputs = ["n", "about"]

    def process(self, tup):
        self.emit([tup.values[0], self.describe()])


class CountedTagging(Counting, Describing, Tagging):
    def process(self, tup):
        self.emit([tup.values[0], [self.count(), self.tag, self.describe()]])
