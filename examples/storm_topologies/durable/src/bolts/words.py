"""Split each line into its words, then count them by word."""

import re
from collections import Counter

from streamparse import Bolt

from output_files import JsonLinesOutput


class SplitBolt(Bolt):
    outputs = ["word", "offset", "position"]

    def process(self, tup):
        offset, line = tup.values
        for position, word in enumerate(re.findall(r"[a-z]+", line.lower())):
            self.emit([word, offset, position])


class CountBolt(Bolt):
    """Records every word occurrence it counts, so a reader can check that each one of
    the log's was counted at least once."""

    outputs = []

    def initialize(self, conf, ctx):
        self.counts = Counter()
        self.output = JsonLinesOutput(self, conf)

    def process(self, tup):
        word, offset, position = tup.values
        self.counts[word] += 1
        self.output.write({"word": word, "offset": offset, "position": position})
