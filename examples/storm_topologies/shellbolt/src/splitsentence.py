"""Multilang bolt: split each sentence into lowercase words."""

import re

from multilang import Bolt

WORD_RE = re.compile(r"[a-z]+")


class SplitSentence(Bolt):
    def process(self, tup):
        for word in WORD_RE.findall(tup.values[0].lower()):
            self.emit([word], anchors=[tup])
        self.ack(tup)


if __name__ == "__main__":
    SplitSentence().run()
