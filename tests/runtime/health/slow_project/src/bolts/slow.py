"""A bolt that spends 12 ms on each tuple (about 80 per second per task)."""

import time

from streamparse import Bolt

COST = 0.012


class SlowBolt(Bolt):
    outputs = []

    def process(self, tup):
        time.sleep(COST)
