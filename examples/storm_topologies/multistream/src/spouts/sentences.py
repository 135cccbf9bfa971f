"""Emit each line of ``data/sentences.txt`` once, with its index."""

import os
import time

from streamparse import Spout

DATA_FILE = os.path.join(os.path.dirname(__file__), os.pardir, "data", "sentences.txt")


def read_sentences(path=DATA_FILE):
    """Non-blank lines of ``path``, stripped; a sentence's id is its index here."""
    with open(path, encoding="utf-8") as text:
        return [line.strip() for line in text if line.strip()]


class SentenceSpout(Spout):
    outputs = ["sentence_id", "sentence"]

    def initialize(self, stormconf, context):
        self.sentences = read_sentences()
        self.next_id = 0

    def next_tuple(self):
        if self.next_id >= len(self.sentences):
            time.sleep(0.01)
            return
        sentence_id = self.next_id
        self.emit([sentence_id, self.sentences[sentence_id]], tup_id=sentence_id)
        self.next_id += 1
        if self.next_id == len(self.sentences):
            self.logger.info("all %d sentences emitted", self.next_id)
