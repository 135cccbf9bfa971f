"""Writes what each tuple's values were, as JSON, one line per tuple."""

import json
import os

from streamparse import Bolt


class RecordBolt(Bolt):
    outputs = []

    def initialize(self, conf, ctx):
        os.makedirs(conf["beans.out"], exist_ok=True)
        self.out = open(os.path.join(conf["beans.out"], f"record-{self.task_id}.jsonl"), "a",
                        buffering=1)

    def process(self, tup):
        self.out.write(json.dumps(list(tup.values), sort_keys=True) + "\n")
