"""A relay that re-emits each tuple, and a sink that appends each id to its file; both
leave anchoring and acking to pystorm (auto-anchor, auto-ack)."""

import os

from streamparse import Bolt


class RelayBolt(Bolt):
    outputs = ["id", "key"]

    def process(self, tup):
        self.emit(tup.values)


class SinkBolt(Bolt):
    outputs = []

    def initialize(self, conf, ctx):
        out = conf["relay.out"]
        os.makedirs(out, exist_ok=True)
        # Line buffered: an id is in the file before pystorm acks its tuple.
        self.ids = open(os.path.join(out, f"sink-{self.task_id}.txt"), "a", buffering=1)

    def process(self, tup):
        self.ids.write(f"{tup.values[0]}\n")
