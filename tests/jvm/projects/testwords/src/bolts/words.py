"""A relay that writes each word to its file before passing it on, and a sink that
writes each (word, count) the Java counter emitted."""

import json
import os

from streamparse import Bolt


def _file(conf, kind, task):
    os.makedirs(conf["words.out"], exist_ok=True)
    return open(os.path.join(conf["words.out"], f"{kind}-{task}.jsonl"), "a", buffering=1)


class RelayBolt(Bolt):
    outputs = ["word"]

    def initialize(self, conf, ctx):
        self.out = _file(conf, "relay", self.task_id)

    def process(self, tup):
        self.out.write(json.dumps(tup.values[0]) + "\n")
        self.emit([tup.values[0]])


class SinkBolt(Bolt):
    outputs = []

    def initialize(self, conf, ctx):
        self.out = _file(conf, "sink", self.task_id)

    def process(self, tup):
        self.out.write(json.dumps(tup.values) + "\n")
