"""Emit the lines of a text file, a fixed number of times, by an offset kept in the
component's checkpointed state: after a rollback the spout rewinds to the offset the
last checkpoint saved, as a Kafka spout rewinds to its saved partition offset."""

import os
import time

from streamparse import Spout

from heronbridge.shims.storm.state import StatefulMixin

from output_files import JsonLinesOutput, int_option

DATA_FILE = os.path.join(os.path.dirname(__file__), os.pardir, "data", "lines.txt")


class LineSpout(StatefulMixin, Spout):
    """Emits ``[line]`` for line ``offset % len(lines)`` of ``data/lines.txt``, offsets
    0 to ``lines * stateful_wordcount.rounds - 1``, at most
    ``stateful_wordcount.lines_per_sec`` a second, each with tuple id ``offset``."""

    outputs = ["line"]

    def initialize(self, stormconf, context):
        with open(DATA_FILE, encoding="utf-8") as text:
            self.lines = text.read().splitlines()
        self.end = len(self.lines) * int_option(stormconf, "stateful_wordcount.rounds", 3)
        self.pause = 1.0 / int_option(stormconf, "stateful_wordcount.lines_per_sec", 500)
        self.state.setdefault("offset", 0)  # restored after a rollback: the rewind
        self.replay = []  # failed lines (Storm: at least once); never under checkpoints
        self.output = JsonLinesOutput(self, stormconf)
        self.output.write({"event": "start", "offset": self.state["offset"]})

    def next_tuple(self):
        if self.replay:
            offset = self.replay.pop()
        elif self.state["offset"] < self.end:
            offset = self.state["offset"]
            self.state["offset"] = offset + 1
        else:
            time.sleep(0.01)
            return
        self.emit([self.lines[offset % len(self.lines)]], tup_id=offset)
        time.sleep(self.pause)

    def fail(self, tup_id):
        self.replay.append(int(tup_id))
