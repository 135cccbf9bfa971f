"""Emit the lines of a text file a fixed number of times, from an offset kept in the
component's state: under checkpoints a rollback rewinds it, as a Kafka spout rewinds
to its saved partition offset; on Storm a failed line is emitted again."""

import os
import time

from streamparse import Spout

from heronbridge.shims.storm.state import StatefulMixin

DATA_FILE = os.path.join(os.path.dirname(__file__), os.pardir, "data", "lines.txt")


def int_option(conf, key, default):
    value = conf.get(key)
    return default if value is None or value == "" else int(value)


class LineSpout(StatefulMixin, Spout):
    """Emits ``[line]`` with tuple id ``offset`` for offsets 0 to ``lines *
    stateful_replays.rounds - 1`` (line ``offset % lines`` of ``data/lines.txt``), at
    most ``stateful_replays.lines_per_sec`` a second."""

    outputs = ["line"]

    def initialize(self, stormconf, context):
        with open(DATA_FILE, encoding="utf-8") as text:
            self.lines = text.read().splitlines()
        self.end = len(self.lines) * int_option(stormconf, "stateful_replays.rounds", 5)
        self.pause = 1.0 / int_option(stormconf, "stateful_replays.lines_per_sec", 20)
        self.state.setdefault("offset", 0)  # restored after a rollback: the rewind
        self.replay = []  # failed lines (Storm: at least once); never under checkpoints

    def next_tuple(self):
        if self.replay:
            offset = self.replay.pop()
        elif self.state["offset"] < self.end:
            offset = self.state["offset"]
            self.state["offset"] = offset + 1
        else:
            return  # done: the host paces the calls
        self.emit([self.lines[offset % len(self.lines)]], tup_id=offset)
        time.sleep(self.pause)

    def fail(self, tup_id):
        self.replay.append(int(tup_id))
