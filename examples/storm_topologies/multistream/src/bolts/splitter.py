"""Split sentences into a stream of words and a stream of sentence lengths."""

import re

from streamparse import Bolt, Stream

WORD_RE = re.compile(r"[a-z]+")


class SplitterBolt(Bolt):
    outputs = [
        Stream(fields=["word", "sentence_id"], name="words"),
        Stream(fields=["sentence_id", "length"], name="lengths"),
    ]

    def process(self, tup):
        sentence_id = tup.values.sentence_id
        words = WORD_RE.findall(tup.values.sentence.lower())
        for word in words:
            self.emit([word, sentence_id], stream="words")
        self.emit([sentence_id, len(words)], stream="lengths")
