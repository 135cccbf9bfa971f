"""The Python half: words out of the Java spout's sentences, and the Java bolt's counts
recorded."""

import re

from streamparse import Bolt

from output_files import JsonLinesOutput


class SplitBolt(Bolt):
    outputs = ["word"]

    def process(self, tup):
        for word in re.findall(r"[a-z]+", tup.values[1].lower()):
            self.emit([word])


class ResultBolt(Bolt):
    outputs = []

    def initialize(self, conf, ctx):
        self.output = JsonLinesOutput(self, conf)

    def process(self, tup):
        word, count = tup.values
        self.output.write({"word": word, "count": count})
