"""A word count written against the runtime's API, stateful under EFFECTIVELY_ONCE.

The spout reads `test.lines` deterministic lines by an offset kept in its state; the
counter keeps counts in its state and writes them (the whole map, replacing the file)
at every tick and checkpoint, so the files always show the state, rolled back or not.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from heronbridge.runtime import Bolt, Spout, Stateful

WORDS = ("apple", "pear", "fig", "plum", "kiwi", "lime", "date")


def line(i: int) -> str:
    return " ".join(WORDS[(i * k) % len(WORDS)] for k in (1, 3, 5))


def expected_counts(lines: int) -> dict[str, int]:
    counts: dict[str, int] = {}
    for i in range(lines):
        for word in line(i).split():
            counts[word] = counts.get(word, 0) + 1
    return counts


class LineSpout(Stateful, Spout):
    outputs = ["line"]

    def open(self, config, context, collector):
        self.lines = config["test.lines"]
        self.interval = config.get("test.interval", 0)
        self.state.setdefault("offset", 0)

    def next_tuple(self):
        offset = self.state["offset"]
        if offset >= self.lines:
            time.sleep(0.001)
            return
        if self.interval:
            time.sleep(self.interval)
        self.collector.emit([line(offset)])
        self.state["offset"] = offset + 1


class SplitBolt(Bolt):
    outputs = ["word"]

    def execute(self, tup):
        if tup.stream == "__tick":
            return
        for word in tup.values[0].split():
            self.collector.emit([word])


class CountBolt(Stateful, Bolt):
    outputs = []

    def prepare(self, config, context, collector):
        self.path = Path(config["test.out"]) / f"counts-{context.task_id}.json"

    def execute(self, tup):
        if tup.stream == "__tick":
            self._write()
            return
        word = tup.values[0]
        self.state[word] = self.state.get(word, 0) + 1

    def pre_save(self, checkpoint_id):
        self._write()

    def _write(self):
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.state))
        os.replace(tmp, self.path)
