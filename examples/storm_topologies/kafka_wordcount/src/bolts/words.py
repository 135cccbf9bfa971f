"""Split lines into words; count each word in the component's state and emit its new
count."""

import re

from streamparse import Bolt

from heronbridge.shims.storm.state import StatefulMixin

WORD_RE = re.compile(r"[a-z]+")


class SplitBolt(Bolt):
    """The words of a Kafka record's value (the spout's `value` field)."""

    outputs = ["word"]

    def process(self, tup):
        for word in WORD_RE.findall(tup.values.value.lower()):
            self.emit([word])


class CountBolt(StatefulMixin, Bolt):
    """Counts in `self.state`, one entry per word (what its input is grouped by), and
    emits `[word, count]` for every occurrence: the count topic holds each word's counts
    1, 2, 3, ... (under EFFECTIVELY_ONCE, each exactly once, as a read_committed consumer
    sees them)."""

    outputs = ["word", "count"]

    def process(self, tup):
        word = tup.values.word
        count = self.state[word] = self.state.get(word, 0) + 1
        self.emit([word, count])
