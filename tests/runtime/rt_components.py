"""Components for the runtime's integration tests. They record what they see as JSON
lines under the directory named by the `test.out` config key, one file per task."""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path

from heronbridge.runtime import Bolt, Spout


class _Recorder:
    def _open_log(self, config, context, kind="received"):
        folder = Path(config["test.out"])
        folder.mkdir(parents=True, exist_ok=True)
        name = f"{kind}-{context.component_id}-{context.task_id}.jsonl"
        self._log = (folder / name).open("a", buffering=1)

    def _record(self, **fields):
        self._log.write(json.dumps(fields) + "\n")


class KeySpout(Spout, _Recorder):
    """Emits `test.count` tuples [key, seq] (key = seq % test.keys) with msg ids, then
    stops; records every ack and fail callback."""

    outputs = ["key", "seq"]

    def open(self, config, context, collector):
        self.count = config.get("test.count", 100)
        self.keys = config.get("test.keys", 10)
        self.reliable = config.get("test.reliable", True)
        self.interval = config.get("test.interval", 0)
        self.seq = 0
        self._open_log(config, context, "spout")

    def next_tuple(self):
        if self.seq >= self.count:
            time.sleep(0.001)
            return
        if self.interval:
            time.sleep(self.interval)
        seq = self.seq
        tasks = self.collector.emit([f"k{seq % self.keys}", seq],
                                    msg_id=seq if self.reliable else None)
        self._record(event="emit", seq=seq, tasks=list(tasks))
        self.seq += 1

    def ack(self, msg_id):
        self._record(event="ack", seq=msg_id)

    def fail(self, msg_id):
        self._record(event="fail", seq=msg_id)


class ReplayingSpout(Spout, _Recorder):
    """Emits seqs 0..test.count-1 (key = seq % test.keys) with msg ids, every
    test.interval seconds, and emits a failed seq again (first): at-least-once from a
    source that keeps what was not acked. Records emits, acks and fails."""

    outputs = ["key", "seq"]

    def open(self, config, context, collector):
        self.count = config.get("test.count", 100)
        self.keys = config.get("test.keys", 10)
        self.interval = config.get("test.interval", 0)
        self.next_seq = 0
        self.replay = []
        self._open_log(config, context, "spout")

    def next_tuple(self):
        if self.replay:
            seq = self.replay.pop()
        elif self.next_seq < self.count:
            seq = self.next_seq
            self.next_seq += 1
            if self.interval:
                time.sleep(self.interval)
        else:
            time.sleep(0.001)
            return
        self.collector.emit([f"k{seq % self.keys}", seq], msg_id=seq)
        self._record(event="emit", seq=seq)

    def ack(self, msg_id):
        self._record(event="ack", seq=msg_id)

    def fail(self, msg_id):
        self.replay.append(msg_id)
        self._record(event="fail", seq=msg_id)


class EndlessSpout(Spout):
    """Emits [key, seq] as fast as it is allowed to, without msg ids."""

    outputs = ["key", "seq"]

    def open(self, config, context, collector):
        self.seq = 0

    def next_tuple(self):
        self.collector.emit([f"k{self.seq % 100}", self.seq])
        self.seq += 1


class RecordingBolt(Bolt, _Recorder):
    """Records each tuple with its source, acks it, and passes [key, seq] on."""

    outputs = ["key", "seq"]

    def prepare(self, config, context, collector):
        self._open_log(config, context)
        self.task = context.task_id

    def execute(self, tup):
        self._record(component=tup.component, stream=tup.stream, task=tup.task,
                     values=tup.values, pid=os.getpid())
        if len(tup.values) == 2:
            self.collector.emit(list(tup.values[:2]), anchors=tup)
        self.collector.ack(tup)


class FailEveryNthBolt(Bolt):
    """Fails the tuples whose seq is a multiple of `test.fail.every`, acks the rest."""

    def prepare(self, config, context, collector):
        self.every = config["test.fail.every"]

    def execute(self, tup):
        if tup.values[1] % self.every == 0:
            self.collector.fail(tup)
        else:
            self.collector.ack(tup)


class NeverAckBolt(Bolt):
    def execute(self, tup):
        logging.getLogger(__name__).debug("holding %s unacked", tup.values)


class SlowBolt(Bolt):
    """Sleeps `test.sleep` seconds per tuple."""

    def prepare(self, config, context, collector):
        self.sleep = config["test.sleep"]

    def execute(self, tup):
        time.sleep(self.sleep)


class DirectSpout(Spout, _Recorder):
    """Emits [seq] on the direct stream `to`, each to task `targets[seq % n]`."""

    outputs = None

    def open(self, config, context, collector):
        self.count = config.get("test.direct.count", 60)
        self.targets = sorted(context.component_tasks("sink"))
        self.seq = 0
        self._open_log(config, context, "spout")

    def next_tuple(self):
        if self.seq >= self.count:
            time.sleep(0.001)
            return
        target = self.targets[self.seq % len(self.targets)]
        self.collector.emit([self.seq], stream="to", direct_task=target)
        self._record(event="direct", seq=self.seq, target=target)
        self.seq += 1


def choose_even_tasks(values, targets):
    """A custom grouping: even seqs to the first target, odd ones to every other."""
    return targets[:1] if values[1] % 2 == 0 else targets[1:]


class TickRecorder(Bolt, _Recorder):
    """Records tick tuples only."""

    def prepare(self, config, context, collector):
        self._open_log(config, context, "ticks")

    def execute(self, tup):
        if tup.is_tick:
            self._record(component=tup.component, stream=tup.stream, task=tup.task,
                         values=tup.values)
        self.collector.ack(tup)


class ConfigRecorder(Bolt, _Recorder):
    """Records the runtime config keys as its task read them (the raw values, and the
    runtime's reading of them), then each tick and each tuple; acks nothing, so what a
    spout sent it stays pending."""

    def prepare(self, config, context, collector):
        from dataclasses import asdict

        from heronbridge.runtime.config import KEYS, TopologyConfig

        self._open_log(config, context, "config")
        read = TopologyConfig.read(config, context.topology_name, context.component_id)
        self._record(event="config", raw={k: config.get(k) for k in KEYS}, read=asdict(read),
                     pid=os.getpid())

    def execute(self, tup):
        logging.getLogger(__name__).debug("recording %s", tup.values)
        self._record(event="tick" if tup.is_tick else "tuple", values=tup.values,
                     task=tup.task)
