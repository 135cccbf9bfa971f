"""Emit the numbers 0 .. direct.count-1, then stop."""

import time

from streamparse import Spout

from output_files import int_option


class NumberSpout(Spout):
    outputs = ["n"]

    def initialize(self, stormconf, context):
        self.count = int_option(stormconf, "direct.count", 60)
        self.next_n = 0

    def next_tuple(self):
        if self.next_n >= self.count:
            time.sleep(0.01)
            return
        self.emit([self.next_n])
        self.next_n += 1
