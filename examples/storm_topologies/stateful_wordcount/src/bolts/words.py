"""Split lines into words (a plain bolt: nothing to save), then count the words in the
component's checkpointed state."""

import os
import re

from streamparse import Bolt

from heronbridge.shims.storm.state import StatefulMixin

from output_files import JsonLinesOutput

WORD_RE = re.compile(r"[a-z]+")


class SplitBolt(Bolt):
    outputs = ["word"]

    def process(self, tup):
        for word in WORD_RE.findall(tup.values.line.lower()):
            self.emit([word])


class CountBolt(StatefulMixin, Bolt):
    """Counts words in ``self.state``, one entry per word (the value its input is
    grouped by), and records each new count. After a rollback it counts on from the last
    checkpoint's counts."""

    outputs = []

    def initialize(self, conf, ctx):
        self.output = JsonLinesOutput(self, conf)
        self.output.write({"event": "start", "pid": os.getpid(),
                           "restored": sum(self.state.values())})

    def process(self, tup):
        word = tup.values.word
        count = self.state[word] = self.state.get(word, 0) + 1
        self.output.write({"word": word, "count": count})
