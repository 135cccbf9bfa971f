"""A bolt whose base comes from a library outside the project."""

from reporting import Reporting
from streamparse import Bolt


class Reported(Reporting, Bolt):
    outputs = ["n", "report"]

    def process(self, tup):
        self.emit([tup.values[0], [self.report(), self.task_id]])
