"""Split lines into words (a plain bolt: nothing to save), then count the words in the
component's state, failing the tuple that brings a word to a task for the first time."""

import re

from streamparse import Bolt

from heronbridge.shims.storm.state import StatefulMixin

WORD_RE = re.compile(r"[a-z]+")


class SplitBolt(Bolt):
    outputs = ["word"]

    def process(self, tup):
        for word in WORD_RE.findall(tup.values.line.lower()):
            self.emit([word])


class CountBolt(StatefulMixin, Bolt):
    """Counts each word in ``self.state["counts"]`` and emits ``[word, count]``. The
    first time a task sees a word (in memory, not in the state) it fails that tuple
    after counting it: on Storm the whole line is replayed and each of its words is
    counted again (at least once); under checkpoints fails mean nothing and the count
    is exact."""

    auto_ack = False
    auto_fail = False
    outputs = ["word", "count"]

    def initialize(self, conf, ctx):
        self.counts = self.state.setdefault("counts", {})
        self.seen = set()

    def process(self, tup):
        word = tup.values.word
        count = self.counts[word] = self.counts.get(word, 0) + 1
        self.emit([word, count])
        if word in self.seen:
            self.ack(tup)
        else:
            self.seen.add(word)
            self.fail(tup)
