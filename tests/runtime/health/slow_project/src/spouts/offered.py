"""A source offering tuples at a steady rate, acked by tuple id."""

import time

from streamparse import Spout

RATE = 200  # tuples per second the source offers


class OfferedSpout(Spout):
    """Emits [n] with tuple id n at RATE per second. Held back, it does not catch up
    later: the source offers RATE, as a live feed would."""

    outputs = ["n"]
    rate = RATE

    def initialize(self, stormconf, context):
        self.period = 1.0 / self.rate if self.rate else 0.0
        self.n = 0
        self.due = time.monotonic()

    def next_tuple(self):
        now = time.monotonic()
        if not self.rate or now < self.due:
            time.sleep(0.001 if self.rate else 0.01)
            return
        self.due = max(self.due + self.period, now - 0.05)
        self.n += 1
        self.emit([self.n], tup_id=self.n)


class EmptySpout(OfferedSpout):
    """A source with nothing in it: the spout idles."""

    rate = 0
