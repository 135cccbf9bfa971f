"""Bolts that record which task received each number."""

from streamparse import Bolt

from output_files import JsonLinesOutput


class ReceiverBolt(Bolt):
    outputs = ["n", "task"]

    def initialize(self, conf, ctx):
        self.output = JsonLinesOutput(self, conf)

    def process(self, tup):
        n = tup.values.n
        self.output.write({"n": n, "task": self.task_id})
        self.emit([n, self.task_id])


class MirrorBolt(ReceiverBolt):
    """Receives the shuffle-grouped ``probe`` stream."""


class SinkBolt(ReceiverBolt):
    """Receives the direct-grouped ``routed`` stream."""
