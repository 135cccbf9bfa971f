"""Numbers 0..test.count-1, each with its own msg id; a failed one is sent again."""

from streamparse import Spout


class Numbers(Spout):
    outputs = ["n"]

    def initialize(self, stormconf, context):
        self.count = int(stormconf.get("test.count", 12))
        self.sent = 0

    def next_tuple(self):
        if self.sent < self.count:
            self.emit([self.sent], tup_id=self.sent)
            self.sent += 1

    def fail(self, tup_id):
        self.emit([tup_id], tup_id=tup_id)
