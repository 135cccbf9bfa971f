"""Ids 0..relay.count-1 at relay.rate per second, keys k{n % 13}: a plain pystorm
ReliableSpout (its default max_fails), which appends every ack and fail to its file.

The pace never catches up: paced from the spout's start, a slow start (JVMs on a loaded
machine) let every id out at once, and a kill after the last ack cost nothing."""

import json
import os
import time

from streamparse import ReliableSpout


class IdSpout(ReliableSpout):
    outputs = ["id", "key"]

    def initialize(self, conf, ctx):
        self.count = int(conf["relay.count"])
        self.rate = float(conf["relay.rate"])
        os.makedirs(conf["relay.out"], exist_ok=True)
        self.events = open(os.path.join(conf["relay.out"], f"spout-{self.task_id}.jsonl"),
                           "a", buffering=1)
        self.next_id = 0
        self.next_at = 0.0

    def next_tuple(self):
        n, now = self.next_id, time.monotonic()
        if n >= self.count or now < self.next_at:
            time.sleep(0.001)
            return
        self.next_id += 1
        self.next_at = now + 1 / self.rate
        self.emit([n, f"k{n % 13}"], tup_id=n)

    def ack(self, tup_id):
        self.events.write(json.dumps({"event": "ack", "id": tup_id}) + "\n")
        super().ack(tup_id)

    def fail(self, tup_id):
        self.events.write(json.dumps({"event": "fail", "id": tup_id}) + "\n")
        super().fail(tup_id)
