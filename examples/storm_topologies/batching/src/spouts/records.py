"""Emit a fixed, deterministic sequence of ``[category, value]`` records."""

import time

from streamparse import Spout

from output_files import int_option

CATEGORIES = "abcde"


def record(i):
    """The i-th record: category cycles a..e, value is (i * 37 + 11) % 100."""
    return [CATEGORIES[i % len(CATEGORIES)], (i * 37 + 11) % 100]


class RecordSpout(Spout):
    """Emits ``batching.count`` records, at most about 100 per second so that
    the input spans more than one batch, then stops."""

    outputs = ["category", "value"]

    def initialize(self, stormconf, context):
        self.count = int_option(stormconf, "batching.count", 200)
        self.next_i = 0

    def next_tuple(self):
        if self.next_i >= self.count:
            time.sleep(0.01)
            return
        self.emit(record(self.next_i))
        self.next_i += 1
        if self.next_i == self.count:
            self.logger.info("all %d records emitted", self.count)
        time.sleep(0.01)
