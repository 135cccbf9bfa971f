"""Word count on heronpy's API (Heron's Python API): sentences -> split -> count.

    heronbridge run examples/heronpy/wordcount.py -t 10

A heronpy Topology subclass, run as Heron would run it; `-o wordcount.sentences=N`
makes the spout stop after N sentences, and `-o wordcount.out=DIR` makes each count task
write its counts to DIR/counts-TASK.json at every tick (every second).
"""

import json
from pathlib import Path

from heronpy.api.bolt.bolt import Bolt
from heronpy.api.spout.spout import Spout
from heronpy.api.stream import Grouping
from heronpy.api.topology import Topology

SENTENCES = [
    "the cow jumped over the moon",
    "an apple a day keeps the doctor away",
    "four score and seven years ago",
    "snow white and the seven dwarfs",
    "i am at two with nature",
]


class SentenceSpout(Spout):
    outputs = ["sentence"]

    def initialize(self, config, context):
        self.limit = config.get("wordcount.sentences")
        self.sent = 0
        self.acked = 0
        self.failed = 0

    def next_tuple(self):
        if self.limit is not None and self.sent >= self.limit:
            return
        self.emit([SENTENCES[self.sent % len(SENTENCES)]], tup_id=self.sent)
        self.sent += 1

    def ack(self, tup_id):
        self.acked += 1

    def fail(self, tup_id):
        self.failed += 1


class SplitBolt(Bolt):
    outputs = ["word"]

    def process(self, tup):
        for word in tup.values[0].split():
            self.emit([word], anchors=[tup])
        self.ack(tup)


class CountBolt(Bolt):
    outputs = ["word", "count"]

    def initialize(self, config, context):
        self.counts = {}
        out = config.get("wordcount.out")
        self.out = Path(out) / f"counts-{context.get_task_id()}.json" if out else None

    def process(self, tup):
        word = tup.values[0]
        count = self.counts[word] = self.counts.get(word, 0) + 1
        self.emit([word, count], anchors=[tup])
        self.ack(tup)

    def process_tick(self, tup):
        if self.out is not None:
            self.out.write_text(json.dumps(self.counts))


class WordCount(Topology):
    config = {
        "topology.reliability.mode": "ATLEAST_ONCE",
        "topology.max.spout.pending": 2000,
    }
    sentences = SentenceSpout.spec(par=1)
    split = SplitBolt.spec(par=2, inputs=[sentences])
    count = CountBolt.spec(par=2, inputs={split: Grouping.fields("word")},
                           config={"topology.tick.tuple.freq.secs": 1})
