"""A spout that emits each of `group.values` once (JSON values, as listed), and a bolt
that appends every value it gets, with its task id, to a file of its own."""

import json
import os

from streamparse import Bolt, Spout


class ValueSpout(Spout):
    outputs = ["v"]

    def initialize(self, conf, ctx):
        self.values = list(conf["group.values"])

    def next_tuple(self):
        if self.values:
            self.emit([self.values.pop(0)])


class SeenBolt(Bolt):
    outputs = []

    def initialize(self, conf, ctx):
        os.makedirs(conf["group.out"], exist_ok=True)
        self.out = open(os.path.join(conf["group.out"], f"seen-{self.task_id}.jsonl"), "a",
                        buffering=1)

    def process(self, tup):
        self.out.write(json.dumps({"task": self.task_id, "v": tup.values[0]}) + "\n")
