"""A spout and a bolt 100 times slower than it, for the memory test and
benchmarks/slow_bolt_memory.py. The spout writes its tally to `bench.out` every second."""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path

from heronbridge.runtime import Bolt, Spout


def _tally(config, name: str, record: dict) -> None:
    path = Path(config["bench.out"]) / f"{name}.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(record))
    os.replace(tmp, path)


class PacedSpout(Spout):
    """Emits [n, payload] at up to `bench.rate` tuples/s (with msg id n under
    at-least-once) until the wall-clock time in the file `bench.out`/until, once there is
    one; then only what failed, again."""

    outputs = ["n", "payload"]

    def open(self, config, context, collector):
        self.config = config
        self.rate = config["bench.rate"]
        self.until = float("inf")
        self.payload = "x" * config["bench.payload"]
        self.reliable = config.get("topology.reliability.mode") == "ATLEAST_ONCE"
        self.next = 0
        self.replay: list[int] = []
        self.outstanding: set[int] = set()
        self.acked = self.failed = 0
        self.started = time.monotonic()
        self.next_tally = 0.0

    def next_tuple(self):
        now = time.monotonic()
        if now >= self.next_tally:
            self.next_tally = now + 1.0
            with contextlib.suppress(OSError, ValueError):
                self.until = float((Path(self.config["bench.out"]) / "until").read_text())
            _tally(self.config, "spout", {
                "emitted": self.next, "acked": self.acked, "failed": self.failed,
                "outstanding": len(self.outstanding), "stopped": time.time() >= self.until})
        if self.replay:
            n = self.replay.pop()
        elif time.time() < self.until and self.next < (now - self.started) * self.rate:
            n = self.next
            self.next += 1
            if self.reliable:
                self.outstanding.add(n)
        else:
            return
        self.collector.emit([n, self.payload], msg_id=n if self.reliable else None)

    def ack(self, msg_id):
        if msg_id in self.outstanding:
            self.outstanding.discard(msg_id)
            self.acked += 1

    def fail(self, msg_id):
        self.failed += 1
        if msg_id in self.outstanding:
            self.replay.append(msg_id)


class SlowBolt(Bolt):
    """Spends `bench.sleep` seconds on each tuple, then acks it."""

    def prepare(self, config, context, collector):
        self.sleep = config["bench.sleep"]

    def execute(self, tup):
        time.sleep(self.sleep)
        self.collector.ack(tup)
