"""Appends each id to this task's file before pystorm acks its tuple."""

import os

from streamparse import Bolt


class SinkBolt(Bolt):
    outputs = []

    def initialize(self, conf, ctx):
        os.makedirs(conf["relay.out"], exist_ok=True)
        self.ids = open(os.path.join(conf["relay.out"], f"sink-{self.task_id}.txt"), "a",
                        buffering=1)

    def process(self, tup):
        self.ids.write(f"{tup.values[0]}\n")
