"""Consumers of the splitter's two named streams."""

from collections import Counter

from streamparse import Bolt

from output_files import JsonLinesOutput


class WordCounterBolt(Bolt):
    """Counts the tuples of the ``words`` stream per word."""

    outputs = ["word", "count"]

    def initialize(self, conf, ctx):
        self.counts = Counter()
        self.output = JsonLinesOutput(self, conf)

    def process(self, tup):
        word = tup.values.word
        self.counts[word] += 1
        self.output.write({"word": word, "count": self.counts[word]})
        self.emit([word, self.counts[word]])


class LengthRecorderBolt(Bolt):
    """Records the length (in words) of each sentence from the ``lengths`` stream."""

    outputs = ["sentence_id", "length"]

    def initialize(self, conf, ctx):
        self.output = JsonLinesOutput(self, conf)

    def process(self, tup):
        sentence_id = tup.values.sentence_id
        length = tup.values.length
        self.output.write({"sentence_id": sentence_id, "length": length})
        self.emit([sentence_id, length])
