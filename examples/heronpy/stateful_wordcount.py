"""Word count that stays exact through crashes: heronpy's stateful API, effectively once.

    heronbridge run examples/heronpy/stateful_wordcount.py -t 20 -o wordcount.out=DIR

The topology runs under EFFECTIVELY_ONCE with a checkpoint every second. The spout reads
a fixed, deterministic list of lines (`line(i)`, `wordcount.lines` of them, at most
`wordcount.rate` a second) by an offset kept in its state: after a rollback it reads
again from the offset of the last checkpoint. The count bolts keep their counts in
their state. With `-o wordcount.out=DIR` each count task writes its counts (with its
task id and process id) to DIR/counts-TASK.json at every tick (each second); once the
spout has read every line, the counts summed over the tasks are `expected_counts()`.
"""

import json
import os
import time
from collections import Counter
from pathlib import Path

from heronpy.api.bolt.bolt import Bolt
from heronpy.api.spout.spout import Spout
from heronpy.api.state.stateful_component import StatefulComponent
from heronpy.api.stream import Grouping
from heronpy.api.topology import Topology

WORDS = ["the", "cow", "jumped", "over", "moon", "an", "apple", "a", "day", "keeps",
         "doctor", "away", "four", "score", "and", "seven"]
LINES, RATE = 3000, 600  # defaults of wordcount.lines and wordcount.rate (lines a second)


def line(i):
    """Line i of the input: 1 to 6 words, always the same."""
    return " ".join(WORDS[(i * 7 + j * 5) % len(WORDS)] for j in range(1 + i % 6))


def expected_counts(lines=LINES):
    return Counter(word for i in range(lines) for word in line(i).split())


class LineSpout(Spout, StatefulComponent):
    outputs = ["line"]

    def init_state(self, stateful_state):
        self.state = stateful_state  # {"offset": the next line to read}

    def pre_save(self, checkpoint_id):
        """Nothing to add: the offset is in the state as it moves."""

    def initialize(self, config, context):
        self.lines = int(config.get("wordcount.lines", LINES))
        self.rate = float(config.get("wordcount.rate", RATE))
        self.started_at, self.started_from = time.monotonic(), self.offset()
        self.log(f"reading from line {self.started_from} of {self.lines}")

    def offset(self):
        return self.state.get("offset") or 0

    def next_tuple(self):
        offset = self.offset()
        if offset >= self.lines:
            return
        if offset - self.started_from >= (time.monotonic() - self.started_at) * self.rate:
            return  # ahead of the rate
        self.emit([line(offset)])
        self.state.put("offset", offset + 1)


class SplitBolt(Bolt):
    outputs = ["word"]

    def process(self, tup):
        for word in tup.values[0].split():
            self.emit([word])


class CountBolt(Bolt, StatefulComponent):
    outputs = ["word", "count"]

    def init_state(self, stateful_state):
        self.counts = stateful_state  # {word: count}

    def pre_save(self, checkpoint_id):
        """Nothing to add: the counts are in the state as they change."""

    def initialize(self, config, context):
        out = config.get("wordcount.out")
        self.task = context.get_task_id()
        self.out = Path(out) / f"counts-{self.task}.json" if out else None

    def process(self, tup):
        word = tup.values[0]
        count = (self.counts.get(word) or 0) + 1
        self.counts.put(word, count)
        self.emit([word, count])

    def process_tick(self, tup):
        if self.out is None:
            return
        counts = {word: self.counts.get(word) for _, word in self.counts.enumerate()}
        report = {"task": self.task, "pid": os.getpid(), "counts": counts}
        partial = self.out.with_suffix(".part")
        partial.write_text(json.dumps(report))
        partial.replace(self.out)  # whole files only, for whoever reads them


class StatefulWordCount(Topology):
    config = {
        "topology.reliability.mode": "EFFECTIVELY_ONCE",
        "topology.stateful.checkpoint.interval.secs": 1,
    }
    lines = LineSpout.spec(par=1)
    split = SplitBolt.spec(par=2, inputs=[lines])
    count = CountBolt.spec(par=2, inputs={split: Grouping.fields("word")},
                           config={"topology.tick.tuple.freq.secs": 1})
