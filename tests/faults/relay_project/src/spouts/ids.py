"""Ids 0..relay.count-1 at relay.rate per second, each with a key k{n % 13}.

A plain pystorm ReliableSpout: max_fails is pystorm's default, so a fourth fail of an id
makes ReliableSpout call ack itself ("pretend we got an ack"). Every ack and fail call
is appended to this task's events file, which the test reads: an id whose ack reached
the spout must have been processed by the sink. Like any spout that keeps its state in
memory, a restarted one starts again from id 0."""

import json
import os
import time

from streamparse import ReliableSpout


class IdSpout(ReliableSpout):
    outputs = ["id", "key"]

    def initialize(self, conf, ctx):
        self.count = int(conf.get("relay.count", 3000))
        self.rate = float(conf.get("relay.rate", 100))
        out = conf["relay.out"]
        os.makedirs(out, exist_ok=True)
        self.events = open(os.path.join(out, f"spout-{self.task_id}.jsonl"), "a", buffering=1)
        self.events.write(json.dumps({"event": "start", "pid": os.getpid()}) + "\n")
        self.next_id = 0
        self.started = time.monotonic()

    def next_tuple(self):
        n = self.next_id
        if n >= self.count or n >= (time.monotonic() - self.started) * self.rate:
            time.sleep(0.001)
            return
        self.next_id += 1
        self.emit([n, f"k{n % 13}"], tup_id=n)

    def ack(self, tup_id):
        self.events.write(json.dumps({"event": "ack", "id": tup_id}) + "\n")
        super().ack(tup_id)

    def fail(self, tup_id):
        self.events.write(json.dumps({"event": "fail", "id": tup_id}) + "\n")
        super().fail(tup_id)
