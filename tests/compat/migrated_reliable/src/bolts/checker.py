"""A bolt that acks and fails explicitly, on a fixed rule."""

from collections import Counter

from heronpy.api.bolt.bolt import Bolt
from output_files import JsonLinesOutput


def should_fail(n, attempt):
    """Multiples of 31 always fail; other multiples of 7 fail on the first attempt."""
    if n % 31 == 0:
        return True
    return n % 7 == 0 and attempt == 1


class CheckerBolt(Bolt):
    outputs = ["n"]

    def initialize(self, config, context):
        self.component_name = context.get_component_id()
        self.task_id = context.get_task_id()
        self.attempts = Counter()
        self.output = JsonLinesOutput(self, config)

    def process(self, tup):
        n = tup.values[0]
        self.attempts[n] += 1
        attempt = self.attempts[n]
        failed = should_fail(n, attempt)
        self.output.write({"n": n, "attempt": attempt, "result": "fail" if failed else "ack"})
        if failed:
            self.fail(tup)
        else:
            self.ack(tup)
