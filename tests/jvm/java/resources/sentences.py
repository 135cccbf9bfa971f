"""javamix's SentenceSpout as a multilang spout written with pystorm, which Storm's
ShellSpout (ShellSentenceSpout) runs from a topology jar's resources/: each sentence
`javamix.rounds` times, its id the tuple id, a failed id emitted again."""

from pystorm import Spout

SENTENCES = [  # javamix.SentenceSpout.SENTENCES
    "the cow jumped over the moon",
    "an apple a day keeps the doctor away",
    "four score and seven years ago",
    "snow white and the seven dwarfs",
    "i am at two with nature",
]


class Sentences(Spout):
    def initialize(self, storm_conf, context):
        self.total = len(SENTENCES) * int(storm_conf["javamix.rounds"])
        self.next = 0
        self.failed = []

    def next_tuple(self):
        if self.failed:
            tup_id = self.failed.pop(0)
        elif self.next < self.total:
            tup_id, self.next = self.next, self.next + 1
        else:
            return
        self.emit([tup_id, SENTENCES[tup_id % len(SENTENCES)]], tup_id=tup_id)

    def fail(self, tup_id):
        self.failed.append(tup_id)


if __name__ == "__main__":
    Sentences().run()
