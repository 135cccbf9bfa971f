import json
import logging
import os
import time

from streamparse import BatchingBolt, Bolt, Stream, TicklessBatchingBolt

from parts.record import Recorder


class PassBolt(Bolt, Recorder):
    """Records each tuple as pystorm shows it, and passes [n] on (auto-anchored)."""

    outputs = ["n"]

    def initialize(self, conf, ctx):
        self.open_record(conf)

    def process(self, tup):
        self.record(component=tup.component, stream=tup.stream, task=tup.task,
                    values=list(tup.values), type=type(tup.values).__name__,
                    fields=list(getattr(tup.values, "_fields", [])), n=tup.values.n)
        self.report_metric("passed", 1)  # pystorm's custom metric call
        self.emit([tup.values[0]])


class RejectBolt(Bolt, Recorder):
    """auto_ack off: fails n % 4 == 0 (or % test.reject), acks the rest, explicitly."""

    auto_ack = False

    def initialize(self, conf, ctx):
        self.every = conf.get("test.reject", 4)
        self.stall = conf.get("test.stall.secs", 0)  # then busy, not reading its input
        self.open_record(conf)

    def process(self, tup):
        n = tup.values[0]
        if self.stall:
            self.record(n=n, result="stalled")
            time.sleep(self.stall)
        if n % self.every == 0:
            self.fail(tup)
            self.record(n=n, result="fail")
        else:
            self.ack(tup)
            self.record(n=n, result="ack")


class CrashBolt(Bolt, Recorder):
    """Raises in process() for n % 10 == 3 (pystorm then fails the tuple and exits)."""

    def initialize(self, conf, ctx):
        self.open_record(conf)
        self.record(event="start")

    def process(self, tup):
        n = tup.values[0]
        self.record(n=n)
        if n % 10 == 3:
            raise ValueError(f"cannot process {n}")


class SoftCrashBolt(CrashBolt):
    """The same, with exit_on_exception off: the task goes on."""

    exit_on_exception = False


class TickBolt(Bolt, Recorder):
    def initialize(self, conf, ctx):
        self.open_record(conf)

    def process(self, tup):
        pass

    def process_tick(self, tup):
        self.record(component=tup.component, stream=tup.stream, task=tup.task,
                    values=list(tup.values), at=time.time())


class GroupBatchBolt(BatchingBolt, Recorder):
    """Batches by n % 3, flushed on ticks; passes the batch's count on."""

    outputs = ["key", "size"]
    ticks_between_batches = 1

    def initialize(self, conf, ctx):
        self.open_record(conf)

    def group_key(self, tup):
        return tup.values[0] % 3

    def process_batch(self, key, tups):
        self.record(key=key, ns=sorted(t.values[0] for t in tups), at=time.time())
        self.emit([key, len(tups)])


class TimedBatchBolt(TicklessBatchingBolt, Recorder):
    """Batches on its own timer thread, every half second."""

    secs_between_batches = 0.5

    def initialize(self, conf, ctx):
        self.open_record(conf)

    def process_batch(self, key, tups):
        self.record(ns=sorted(t.values[0] for t in tups), at=time.time())


class ProbeBolt(Bolt, Recorder):
    """Emits on stream 'probe' asking for the task ids, and records them."""

    outputs = [Stream(["n"], name="probe")]

    def initialize(self, conf, ctx):
        self.open_record(conf)

    def process(self, tup):
        tasks = self.emit([tup.values[0]], stream="probe", need_task_ids=True)
        self.record(n=tup.values[0], tasks=tasks)


class ShapeBolt(Bolt):
    """Emits values that a JSON round trip changes: a tuple, a dict with int keys, and
    bytes (pystorm's encoder writes the UTF-8 text they hold)."""

    outputs = ["pair", "table", "text", "raw"]

    def process(self, tup):
        n = tup.values[0]
        self.emit([(n, n + 1), {n: "x", "k": [1, (2, 3)]}, f"n={n}", f"n={n}".encode()])


class LoggingBolt(Bolt, Recorder):
    """Logs at every level, reports an error and a metric, then carries on."""

    def initialize(self, conf, ctx):
        self.open_record(conf)
        self.print = conf.get("test.print", False)
        name = f"conf-{self.component_name}-{self.task_id}.jsonl"
        with open(os.path.join(conf["test.out"], name), "w") as f:  # its log settings
            f.write(json.dumps({"log": {k: v for k, v in conf.items()
                                        if k.startswith("pystorm.log.")}}) + "\n")

    def process(self, tup):
        n = tup.values[0]
        if n == 0:
            self.logger.debug("debug line %s", n)
            self.logger.info("info line %s", n)
            self.logger.warning("warning line %s", n)
            self.logger.error("error line %s", n)
            self.log("storm log line", level="warn")
            if self.print:  # as a subprocess, stdout is the protocol's pipe
                print("printed line")
            logging.getLogger("user.module").warning("module logger line")
            try:
                raise KeyError("reported")
            except KeyError as exc:
                self.raise_exception(exc, tup)
            self.report_metric("seen", 1)
        self.record(n=n)


class ReprSink(Bolt, Recorder):
    """Records the repr of every value it receives (to see types after the trip)."""

    def initialize(self, conf, ctx):
        self.open_record(conf)

    def process(self, tup):
        self.record(values=[repr(v) for v in tup.values])


class SetEmitter(Bolt):
    """Emits a value JSON cannot encode (a set) for n == 2."""

    outputs = ["value"]

    def process(self, tup):
        n = tup.values[0]
        self.emit([{n} if n == 2 else n])


class AwaitingBolt(Bolt, Recorder):
    """auto_ack off: holds each tuple until an outside client would have called back,
    as a Kafka producer's delivery report does: it acks what it held at its previous
    wake-up, never in process(). In-process the runtime calls wake(); a multilang child
    gets ticks (heronbridge.multilang.wake.secs) while it holds tuples."""

    auto_ack = False

    def initialize(self, conf, ctx):
        self.open_record(conf)
        self.held, self.called_back = [], []

    def process(self, tup):
        self.held.append(tup)

    def wake(self):
        for tup in self.called_back:
            self.ack(tup)
            self.record(n=tup.values[0], result="ack")
        self.called_back, self.held = self.held, []
        self.record(event="wake")
        return 0.01 if self.called_back else None

    def process_tick(self, tup):
        self.wake()
        self.ack(tup)


class SeenBolt(Bolt, Recorder):
    """Records each number with the stream it came on; emits nothing (and reports no
    metric: Storm ends a topology whose shell bolt reports one it did not register)."""

    def initialize(self, conf, ctx):
        self.open_record(conf)

    def process(self, tup):
        self.record(n=tup.values[0], stream=tup.stream, source=tup.component)


class DirectBolt(Bolt):
    """Sends n on its direct stream 'routed' to the sink's task n % (the sink's tasks)."""

    outputs = [Stream(["n"], name="routed", direct=True)]

    def initialize(self, conf, ctx):
        self.sinks = sorted(int(task) for task, name in self.context["task->component"].items()
                            if name == "sink")

    def process(self, tup):
        n = tup.values[0]
        self.emit([n], stream="routed", direct_task=self.sinks[n % len(self.sinks)])


class DroppingBolt(Bolt):
    """auto_ack off: leaves n % 10 == 0 unacked, so its tree times out; acks the rest; logs
    n == 1 through pystorm's logger."""

    auto_ack = False

    def process(self, tup):
        if tup.values[0] == 1:
            self.logger.warning("dropper logger line")
        if tup.values[0] % 10:
            self.ack(tup)


class ErringDroppingBolt(DroppingBolt):
    """The same, and for n == 1 logs with multilang `log` too and reports an error (the
    multilang `error` command)."""

    def process(self, tup):
        if tup.values[0] == 1:
            self.log("dropper log line", level="warn")
            try:
                raise KeyError("reported")
            except KeyError as exc:
                self.raise_exception(exc, tup)
        super().process(tup)
