from streamparse import Bolt

from recorder import Recorder


class RecordingBolt(Bolt):
    outputs = ["n"]

    def initialize(self, conf, ctx):
        self.rec = Recorder(conf, "bolt", self.component_name, self.task_id)
        self.tasks = sorted(int(t) for t, c in self.context["task->component"].items()
                            if c == self.component_name)
        self.rec.record("start", tasks=self.tasks, me=self.task_id)

    def process(self, tup):
        self.rec.record("recv", n=tup.values[0])
        self.emit([tup.values[0]])


class FlakyBolt(RecordingBolt):
    auto_ack = False
    auto_fail = False

    def initialize(self, conf, ctx):
        super().initialize(conf, ctx)
        self.seen = set()

    def process(self, tup):
        n = tup.values[0]
        self.rec.record("recv", n=n)
        if n % 3 == 0 and n not in self.seen:
            self.seen.add(n)
            self.fail(tup)
            return
        self.emit([n], anchors=[tup])
        self.ack(tup)
