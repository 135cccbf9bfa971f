"""Emit each line of ``data/sentences.txt`` once."""

import os
import time

from streamparse import Spout

DATA_FILE = os.path.join(os.path.dirname(__file__), os.pardir, "data", "sentences.txt")


def read_sentences(path=DATA_FILE):
    """Non-blank lines of ``path``, stripped."""
    with open(path, encoding="utf-8") as text:
        return [line.strip() for line in text if line.strip()]


class SentenceSpout(Spout):
    outputs = ["sentence"]

    def initialize(self, stormconf, context):
        self.sentences = read_sentences()
        self.next_index = 0

    def next_tuple(self):
        if self.next_index >= len(self.sentences):
            time.sleep(0.01)
            return
        # The tuple id makes the split bolt's anchoring and acking meaningful.
        self.emit([self.sentences[self.next_index]], tup_id=self.next_index)
        self.next_index += 1
