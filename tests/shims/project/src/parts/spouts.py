import time

from streamparse import ReliableSpout, Spout

from parts.record import Recorder


class Counting(Recorder):
    """Emits [n] with tup_id n, for n below test.count."""

    outputs = ["n"]

    def initialize(self, conf, ctx):
        self.count = conf.get("test.count", 50)
        self.n = 0
        self.open_record(conf, "spout")

    def next_tuple(self):
        if self.n >= self.count:
            time.sleep(0.001)
            return
        self.emit([self.n], tup_id=self.n)
        self.emitted(self.n)
        self.n += 1

    def emitted(self, n):
        pass


class NumberSpout(Counting, Spout):
    """Counts; records every callback."""

    def emitted(self, n):
        self.record(event="emit", id=n)

    def ack(self, tup_id):
        self.record(event="ack", id=tup_id)

    def fail(self, tup_id):
        self.record(event="fail", id=tup_id)

    def activate(self):
        self.record(event="activate")

    def deactivate(self):
        self.record(event="deactivate")


class RetryingSpout(Counting, ReliableSpout):
    """pystorm's ReliableSpout with max_fails 2; records acks and fails."""

    max_fails = 2

    def ack(self, tup_id):
        self.record(event="ack", id=tup_id)
        super().ack(tup_id)

    def fail(self, tup_id):
        self.record(event="fail", id=tup_id)
        super().fail(tup_id)


class BytesSpout(Spout):
    """Emits bytes, as a Kafka consumer's msg.value() returns them, and bytes in a list."""

    outputs = ["value", "more"]

    def initialize(self, conf, ctx):
        self.count = conf.get("test.count", 50)
        self.n = 0

    def next_tuple(self):
        if self.n < self.count:
            self.emit([f"dog-{self.n}".encode(), [b"nested", self.n]], tup_id=self.n)
            self.n += 1
