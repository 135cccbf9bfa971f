"""Count words and record every new count; on each tick tuple (when the topology sets
``topology.tick.tuple.freq.secs``), log the totals so far."""

from collections import Counter

from streamparse import Bolt

from output_files import JsonLinesOutput


class WordCountBolt(Bolt):
    outputs = ["word", "count"]

    def initialize(self, conf, ctx):
        self.counter = Counter()
        self.total = 0
        self.output = JsonLinesOutput(self, conf)

    def process(self, tup):
        word = tup.values[0]
        self.counter[word] += 1
        self.total += 1
        count = self.counter[word]
        self.output.write({"word": word, "count": count})
        self.emit([word, count])
        if self.total % 1000 == 0:
            self.logger.info("counted %d words", self.total)

    def process_tick(self, tup):
        self.logger.info("%d words counted so far, %d distinct", self.total, len(self.counter))
