"""Emit the words of a text file, one word per tuple, for ever unless told otherwise."""

import os
import random
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
    """Reads ``data/words.txt`` line by line, over and over: ``wordcount.rounds`` times,
    then stops (0, the default: never stops). With ``wordcount.pick`` set to
    ``random`` it emits ``random.choice(words)`` instead, for ever."""

    outputs = ["word"]

    def initialize(self, stormconf, context):
        self.lines = read_lines()
        self.words = [word for line in self.lines for word in line]
        self.rounds = int_option(stormconf, "wordcount.rounds", 0)
        self.random = stormconf.get("wordcount.pick") == "random"
        self.round = 0
        self.line_no = 0
        self.emitted = 0
        self.done = False

    def next_tuple(self):
        if self.done:
            time.sleep(0.01)
            return
        if self.random:
            self.emit([random.choice(self.words)], tup_id=self.emitted)
            self.emitted += 1
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
