"""Split lines into words (a plain bolt: nothing to save), then count the words in the
component's checkpointed state."""

import os
import re
from collections import Counter

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
    """Counts words in ``self.state["counts"]`` and records each new count. After a
    rollback it counts on from the last checkpoint's counts."""

    outputs = []

    def initialize(self, conf, ctx):
        self.counts = self.state.setdefault("counts", Counter())
        self.output = JsonLinesOutput(self, conf)
        self.output.write({"event": "start", "pid": os.getpid(),
                           "restored": sum(self.counts.values())})

    def process(self, tup):
        word = tup.values.word
        self.counts[word] += 1
        self.output.write({"word": word, "count": self.counts[word]})
