"""Components for the tests of faults: a spout that pauses once, a bolt that dies once,
a task that never starts. They record as rt_components' do (`test.out`)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from rt_components import RecordingBolt, ReplayingSpout

from heronbridge.runtime import Bolt


class PausingSpout(ReplayingSpout):
    """A ReplayingSpout that stops after emitting `test.pause.at` until the DiesOnceBolt
    that received it has died (its process gone), so that no tuple is in flight to it
    then: every later one reaches a task that is down, or a live one."""

    def open(self, config, context, collector):
        super().open(config, context, collector)
        self.pause_at = config["test.pause.at"]
        self.marker = Path(config["test.out"]) / "died"

    def next_tuple(self):
        # Emitting nothing (rather than sleeping here) lets the runtime send what was
        # emitted before; a replay would be in flight too.
        if self.next_seq == self.pause_at + 1 and self.waiting():
            time.sleep(0.005)
            return
        super().next_tuple()

    def waiting(self) -> bool:
        if not hasattr(self, "wait_until"):
            self.wait_until = time.monotonic() + 30
        return time.monotonic() < self.wait_until and not _dead(self.marker)


def _dead(marker: Path) -> bool:
    try:
        os.kill(int(marker.read_text()), 0)
    except (OSError, ValueError):  # no marker yet (or half written), or no such process
        return marker.exists() and marker.read_text().isdigit()
    return False


class DiesOnceBolt(RecordingBolt):
    """Records and acks like RecordingBolt, but the first task to receive seq
    `test.die.at` fails that tuple and raises: its task exits and is restarted (once: a
    marker file under `test.out` remembers)."""

    def prepare(self, config, context, collector):
        super().prepare(config, context, collector)
        self.die_at = config["test.die.at"]
        self.marker = Path(config["test.out"]) / "died"

    def execute(self, tup):
        if tup.values[1] == self.die_at and not self.marker.exists():
            self.marker.write_text(str(os.getpid()))
            self.collector.fail(tup)
            msg = f"dying on purpose at seq {self.die_at}"
            raise RuntimeError(msg)
        super().execute(tup)


class AlwaysFailsBolt(Bolt):
    """Raises at its first tuple: its task exits, every time it is restarted."""

    def execute(self, tup):
        msg = "this bolt fails at every tuple"
        raise RuntimeError(msg)


class TalkativeBolt(Bolt):
    """Prints `test.lines` lines of output per tuple (to its task's log) and acks."""

    def prepare(self, config, context, collector):
        self.lines = config.get("test.lines", 20)

    def execute(self, tup):
        for i in range(self.lines):
            print(f"tuple {tup.values[1]} line {i}: {'x' * 60}", flush=True)
        self.collector.ack(tup)
