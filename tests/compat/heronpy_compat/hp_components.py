"""heronpy components the tests run, in this process and in real topologies' tasks.

Options (component or topology config): test.out (a folder: each task appends JSON
lines to <out>/<component>-<task>.jsonl), test.count (tuples the spout emits), test.fail.every
(the judge fails every n-th number).
"""

import json
from pathlib import Path

from heronpy.api.bolt.bolt import Bolt
from heronpy.api.custom_grouping import ICustomGrouping
from heronpy.api.spout.spout import Spout
from heronpy.api.task_hook import ITaskHook


class Recorder:
    """Appends one JSON line per event to this task's file (if test.out is set)."""

    def __init__(self, config, context):
        out = config.get("test.out")
        self.task = context.get_task_id()
        self.path = Path(out) / f"{context.get_component_id()}-{self.task}.jsonl" if out \
            else None
        self.events = []

    def write(self, **event):
        event["task"] = self.task
        self.events.append(event)
        if self.path is not None:
            with self.path.open("a") as f:
                f.write(json.dumps(event) + "\n")


class NumberSpout(Spout):
    """Emits [n, "k<n % 5>"] with tup_id n for n in 0 .. test.count-1."""

    outputs = ["n", "key"]

    def initialize(self, config, context):
        self.config = config
        self.count = config.get("test.count", 10)
        self.n = 0
        self.record = Recorder(config, context)

    def next_tuple(self):
        if self.n < self.count:
            self.emit([self.n, f"k{self.n % 5}"], tup_id=self.n)
            self.n += 1

    def ack(self, tup_id):
        self.record.write(event="ack", n=tup_id)

    def fail(self, tup_id):
        self.record.write(event="fail", n=tup_id)

    def activate(self):
        self.record.write(event="activate")

    def deactivate(self):
        self.record.write(event="deactivate")


class JudgeBolt(Bolt):
    """Acks each number, fails every test.fail.every-th explicitly; passes n on."""

    outputs = ["n"]

    def initialize(self, config, context):
        self.every = config.get("test.fail.every", 0)
        self.record = Recorder(config, context)

    def process(self, tup):
        n = tup.values[0]
        self.emit([n], anchors=[tup])
        if self.every and n % self.every == 0:
            self.fail(tup)
        else:
            self.ack(tup)


class RecordBolt(Bolt):
    """Records every tuple (and tick) it gets, and acks it."""

    def initialize(self, config, context):
        self.config = config
        self.context = context
        self.record = Recorder(config, context)

    def process(self, tup):
        self.record.write(event="tuple", values=tup.values, source=tup.component,
                          stream=tup.stream, id=tup.id)
        self.ack(tup)

    def process_tick(self, tup):
        self.record.write(event="tick", stream=tup.stream, source=tup.component)


class ModGrouping(ICustomGrouping):
    """Sends n to the (n mod tasks)-th target task."""

    def prepare(self, context, component, stream, target_tasks):
        self.targets = sorted(target_tasks)
        self.source = (context.get_component_id(), component, stream)

    def choose_tasks(self, values):
        return [self.targets[values[0] % len(self.targets)]]


class CountingHook(ITaskHook):
    """Counts the task hook calls it gets (by method name); `last` is the latest info."""

    def __init__(self):
        self.calls = {}
        self.last = None


def _counter(name):
    def count(self, *args):
        self.calls[name] = self.calls.get(name, 0) + 1
        if name not in ("prepare", "clean_up"):
            self.last = args[0]
    return count


for _name in ("prepare", "clean_up", "emit", "spout_ack", "spout_fail", "bolt_execute",
              "bolt_ack", "bolt_fail"):
    setattr(CountingHook, _name, _counter(_name))


# -- the extras, as migrated code subclasses them ------------------------------------------

from heronbridge.shims.heronpy.extras import (  # noqa: E402
    BatchingBolt,
    ReliableSpout,
    TicklessBatchingBolt,
)


class KeyBatcher(BatchingBolt):
    """Counts each key's batch; a batch keyed "boom" raises."""

    outputs = ["key", "size"]

    def group_key(self, tup):
        return tup.values[1]

    def process_batch(self, key, tups):
        if key == "boom":
            msg = "boom"
            raise ValueError(msg)
        self.emit([key, len(tups)])


class TimedBatcher(TicklessBatchingBolt):
    outputs = ["key", "size"]
    secs_between_batches = 5

    def process_batch(self, key, tups):
        self.emit([key, len(tups)])


class Replaying(ReliableSpout):
    """Emits [n] with id n for n < test.count; replays failures up to twice."""

    outputs = ["n"]
    max_fails = 2

    def initialize(self, config, context):
        self.count = config.get("test.count", 3)
        self.n = 0

    def next_tuple(self):
        if self.n < self.count:
            self.emit([self.n], tup_id=self.n)
            self.n += 1
