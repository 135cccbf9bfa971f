"""A ReliableSpout over the numbers 0 .. replays.count-1."""

import time

from streamparse import ReliableSpout

from output_files import JsonLinesOutput, int_option


class NumberSpout(ReliableSpout):
    """Emits ``[n]`` with tuple id ``n``; ReliableSpout replays what fails."""

    outputs = ["n"]
    max_fails = 3

    def initialize(self, stormconf, context):
        self.count = int_option(stormconf, "replays.count", 300)
        self.next_n = 0
        self.output = JsonLinesOutput(self, stormconf)

    def next_tuple(self):
        if self.next_n >= self.count:
            time.sleep(0.01)
            return
        n = self.next_n
        self.emit([n], tup_id=n)
        self.next_n += 1

    def ack(self, tup_id):
        tup_id = int(tup_id)
        self.output.write({"event": "ack", "id": tup_id})
        super().ack(tup_id)

    def fail(self, tup_id):
        tup_id = int(tup_id)
        self.output.write({"event": "fail", "id": tup_id})
        # Replays the tuple, or, past max_fails, calls self.ack (recorded above).
        super().fail(tup_id)
