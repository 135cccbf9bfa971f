"""Emit the words of a text file, one word per tuple."""

import os
import re
import time

from streamparse import Spout

from output_files import int_option

DATA_FILE = os.path.join(os.path.dirname(__file__), os.pardir, "data", "words.txt")
WORD_RE = re.compile(r"[a-z]+")


def read_lines(path=DATA_FILE):
    """The words of each line of ``path``: lowercase runs of letters a-z."""
    with open(path, encoding="utf-8") as text:
        return [WORD_RE.findall(line.lower()) for line in text]


class WordSpout(Spout):
    """Reads ``data/words.txt`` ``wordcount.rounds`` times, then stops."""

    outputs = ["word"]

    def initialize(self, stormconf, context):
        self.lines = read_lines()
        self.rounds = int_option(stormconf, "wordcount.rounds", 1)
        self.round = 0
        self.line_no = 0
        self.emitted = 0
        self.done = self.rounds <= 0

    def next_tuple(self):
        if self.done:
            time.sleep(0.01)
            return
        # One line of the file per call: a handful of words, never a long block.
        for word in self.lines[self.line_no]:
            self.emit([word], tup_id=self.emitted)  # tracked: acked once counted
            self.emitted += 1
        self.line_no += 1
        if self.line_no == len(self.lines):
            self.line_no = 0
            self.round += 1
            if self.round == self.rounds:
                self.done = True
                self.logger.info(
                    "input exhausted after %d rounds, %d words", self.rounds, self.emitted
                )
