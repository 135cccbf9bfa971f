"""Emit the semver version this task imported, a few times a second."""

import time

import semver
from pins import report
from streamparse import Spout


class VersionSpout(Spout):
    outputs = ["version"]

    def initialize(self, stormconf, context):
        report(self)

    def next_tuple(self):
        time.sleep(0.1)
        self.emit([semver.__version__])
