"""Word count on the runtime's own API: sentences -> split -> count (fields grouping).

    heronbridge run examples/runtime/wordcount.py -t 10

`-o wordcount.sentences=N` makes the spout stop after N sentences.
"""

from heronbridge.runtime import Bolt, Grouping, Spout, TopologyBuilder

SENTENCES = [
    "the cow jumped over the moon",
    "an apple a day keeps the doctor away",
    "four score and seven years ago",
    "snow white and the seven dwarfs",
    "i am at two with nature",
]


class SentenceSpout(Spout):
    outputs = ["sentence"]

    def open(self, config, context, collector):
        self.limit = config.get("wordcount.sentences")
        self.sent = 0
        self.acked = 0
        self.failed = 0

    def next_tuple(self):
        if self.limit is not None and self.sent >= self.limit:
            return
        self.collector.emit([SENTENCES[self.sent % len(SENTENCES)]], msg_id=self.sent)
        self.sent += 1

    def ack(self, msg_id):
        self.acked += 1

    def fail(self, msg_id):
        self.failed += 1


class SplitBolt(Bolt):
    outputs = ["word"]

    def execute(self, tup):
        for word in tup.values[0].split():
            self.collector.emit([word], anchors=tup)
        self.collector.ack(tup)


class CountBolt(Bolt):
    outputs = ["word", "count"]

    def prepare(self, config, context, collector):
        self.counts = {}

    def execute(self, tup):
        word = tup.values[0]
        count = self.counts[word] = self.counts.get(word, 0) + 1
        self.collector.emit([word, count], anchors=tup)
        self.collector.ack(tup)


builder = TopologyBuilder("wordcount", {
    "topology.reliability.mode": "ATLEAST_ONCE",
    "topology.max.spout.pending": 2000,
})
sentences = builder.spout("sentences", SentenceSpout)
split = builder.bolt("split", SplitBolt, inputs=[sentences])
builder.bolt("count", CountBolt, inputs={split: Grouping.by_fields("word")})
