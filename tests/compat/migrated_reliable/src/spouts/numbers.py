"""A ReliableSpout over the numbers 0 .. reliable.count-1."""

import time

from output_files import JsonLinesOutput, int_option

from heronbridge.shims.heronpy.extras import ReliableSpout


class NumberSpout(ReliableSpout):
    """Emits ``[n]`` with tuple id ``n``; replays a failed tuple up to ``max_fails``
    times, then acks it. Every ack and fail callback is recorded."""

    outputs = ["n"]
    max_fails = 3

    def initialize(self, config, context):
        self.component_name = context.get_component_id()
        self.task_id = context.get_task_id()
        self.count = int_option(config, "reliable.count", 100)
        self.next_n = 0
        self.output = JsonLinesOutput(self, config)

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
        super().fail(tup_id)
