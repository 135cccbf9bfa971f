"""Report the semver version this task imported, beside the spout's."""

import semver
from pins import first_tuple, report
from streamparse import Bolt


class ReportBolt(Bolt):
    outputs = ["spout_version", "bolt_version"]

    def initialize(self, stormconf, context):
        self.first = True
        report(self)

    def process(self, tup):
        if self.first:
            self.first = False
            first_tuple(self)
        self.emit([tup.values[0], semver.__version__])
