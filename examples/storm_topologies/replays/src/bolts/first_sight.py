"""A bolt that fails the first delivery of every multiple of 7 it sees."""

from streamparse import Bolt

from output_files import JsonLinesOutput


class FirstSightBolt(Bolt):
    """Each task remembers what it has seen: a replay that lands on another task is a
    first sight there, and fails again."""

    auto_ack = False
    auto_fail = False
    outputs = ["n"]

    def initialize(self, conf, ctx):
        self.seen = set()
        self.output = JsonLinesOutput(self, conf)

    def process(self, tup):
        n = tup.values[0]
        first = n not in self.seen
        self.seen.add(n)
        failed = n % 7 == 0 and first
        self.output.write({"n": n, "result": "fail" if failed else "ack"})
        if failed:
            self.fail(tup)
        else:
            self.ack(tup)
