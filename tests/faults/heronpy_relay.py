"""Issue 25's shape on heronpy's API: a ReliableSpout (heronbridge's, pystorm's logic and
default max_fails, which heronpy lacks), a relay (par 3, shuffle) and a sink (par 3,
fields on the key); ack and fail calls and the ids the sink saw go to the same files as
the streamparse project's (tests/faults/relay_project)."""

import json
import os
import time

from heronpy.api.bolt.bolt import Bolt
from heronpy.api.stream import Grouping
from heronpy.api.topology import Topology

from heronbridge.compat.heronpy.extras import ReliableSpout


class IdSpout(ReliableSpout):
    outputs = ["id", "key"]

    def initialize(self, config, context):
        self.count = int(config.get("relay.count", 3000))
        self.rate = float(config.get("relay.rate", 100))
        out = config["relay.out"]
        os.makedirs(out, exist_ok=True)
        task = context.get_task_id()
        self.events = open(os.path.join(out, f"spout-{task}.jsonl"), "a", buffering=1)  # noqa: SIM115
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


class RelayBolt(Bolt):
    outputs = ["id", "key"]

    def process(self, tup):
        self.emit(list(tup.values), anchors=[tup])
        self.ack(tup)


class SinkBolt(Bolt):
    outputs = []

    def initialize(self, config, context):
        out = config["relay.out"]
        os.makedirs(out, exist_ok=True)
        task = context.get_task_id()
        self.ids = open(os.path.join(out, f"sink-{task}.txt"), "a", buffering=1)  # noqa: SIM115

    def process(self, tup):
        self.ids.write(f"{tup.values[0]}\n")
        self.ack(tup)


class Relay(Topology):
    config = {"topology.reliability.mode": "ATLEAST_ONCE"}
    ids = IdSpout.spec(par=1)
    relay = RelayBolt.spec(par=3, inputs={ids: Grouping.SHUFFLE})
    sink = SinkBolt.spec(par=3, inputs={relay: Grouping.fields("key")})
