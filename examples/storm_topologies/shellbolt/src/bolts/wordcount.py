"""Count the words produced by the multilang split bolt."""

from collections import Counter

from streamparse import Bolt

from output_files import JsonLinesOutput


class WordCountBolt(Bolt):
    outputs = ["word", "count"]

    def initialize(self, conf, ctx):
        self.counts = Counter()
        self.output = JsonLinesOutput(self, conf)

    def process(self, tup):
        word = tup.values.word
        self.counts[word] += 1
        self.output.write({"word": word, "count": self.counts[word]})
        self.emit([word, self.counts[word]])
