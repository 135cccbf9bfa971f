"""Components for the health manager's scenarios: a spout at a steady rate, a bolt with a
fixed cost per tuple, a bolt that crashes every few seconds."""

from __future__ import annotations

import time

from heronbridge.runtime import Bolt, Spout


class RateSpout(Spout):
    """Emits `test.rate` tuples [key, pad] per second; a fraction `test.hot` of them has
    the key "hot", the others one of `test.keys` keys. After a pause (backpressure) it
    does not catch up: the rate is the input's, as from a live source."""

    outputs = ["key", "pad"]

    def open(self, config, context, collector):
        self.period = 1.0 / config["test.rate"]
        self.hot = config.get("test.hot", 0.0)
        self.keys = config.get("test.keys", 16)
        self.pad = "x" * config.get("test.pad", 1000)
        self.seq = 0
        self.due = time.monotonic()

    def next_tuple(self):
        now = time.monotonic()
        if now < self.due:
            time.sleep(min(self.due - now, 0.002))
            return
        self.due = max(self.due + self.period, now - 0.05)
        self.seq += 1
        hot = (self.seq % 100) < self.hot * 100
        self.collector.emit(["hot" if hot else f"k{self.seq % self.keys}", self.pad])


class CostlyBolt(Bolt):
    """Spends `test.cost` seconds per tuple (sleeping, so that two cores go far)."""

    def prepare(self, config, context, collector):
        self.cost = config["test.cost"]

    def execute(self, tup):
        time.sleep(self.cost)


class CrashingBolt(Bolt):
    """Raises once it has run `test.crash.secs` seconds."""

    def prepare(self, config, context, collector):
        self.until = time.monotonic() + config["test.crash.secs"]

    def execute(self, tup):
        if time.monotonic() > self.until:
            msg = "crash drill: this bolt fails every few seconds"
            raise RuntimeError(msg)
