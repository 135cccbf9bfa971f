from streamparse import Spout

from recorder import Recorder


class NumberSpout(Spout):
    outputs = ["n"]

    def initialize(self, stormconf, context):
        self.rec = Recorder(stormconf, "spout", self.component_name, self.task_id)
        self.count = int(stormconf.get("probes.count", 30))
        self.sent = 0

    def next_tuple(self):
        if self.sent < self.count:
            self.emit([self.sent], tup_id=self.sent)
            self.sent += 1

    def ack(self, tup_id):
        self.rec.record("ack", n=tup_id)

    def fail(self, tup_id):
        self.rec.record("fail", n=tup_id)
        self.emit([tup_id], tup_id=tup_id)
