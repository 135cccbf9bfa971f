"""The base bolt: what pystorm gave it, read in initialize and in process."""

from streamparse import Bolt


class Tagging(Bolt):
    outputs = ["n", "tag"]
    factor = 1

    def initialize(self, conf, ctx):
        self.tag = f"{self.component_name}@{ctx['componentid']}/{self.topology_name}"
        self.peers = sorted(int(t) for t, c in self.context["task->component"].items()
                            if c == self.component_name)
        self.timeout = conf.get("topology.message.timeout.secs")

    def process(self, tup):
        n = tup.values[0]
        self.emit([n * self.factor, [self.tag, self.peers.index(self.task_id), self.timeout]])
