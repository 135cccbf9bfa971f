"""Components for the UI's tests: a paced spout and bolts that can be made slow, or made
to raise, while the topology runs, by creating a file in the folder `ui.flags` names."""

from __future__ import annotations

import logging
import time
from pathlib import Path

from heronbridge.runtime import Bolt, Spout

log = logging.getLogger("ui.components")


class Numbers(Spout):
    """Emits [n] with a msg id, one every `ui.interval` seconds."""

    outputs = ["n"]

    def open(self, config, context, collector):
        self.interval = config.get("ui.interval", 0.002)
        self.n = 0

    def next_tuple(self):
        time.sleep(self.interval)
        self.collector.emit([self.n], msg_id=self.n)
        self.n += 1


class Flags:
    """Looks at the flag files at most every 0.1 s (not per tuple)."""

    def _flags(self, config, context):
        self.folder = Path(config["ui.flags"])
        self.component = context.component_id
        self.checked = 0.0
        self.slow = False
        self.busy = False

    def _check(self):
        now = time.monotonic()
        if now - self.checked < 0.1:
            return
        self.checked = now
        self.slow = (self.folder / f"slow-{self.component}").exists()
        self.busy = (self.folder / f"busy-{self.component}").exists()
        raise_flag = self.folder / f"raise-{self.component}"
        try:
            raise_flag.unlink()  # once, in one task: the restarted task must not raise again
        except FileNotFoundError:
            return
        msg = f"{self.component} was told to fail"
        raise ValueError(msg)


def crunch() -> int:
    """CPU work, for a profile to find by name."""
    return sum(i * i for i in range(20000))  # a few ms: a stack dump finds it often


class Work(Bolt, Flags):
    """Passes [n] on; sleeps 20 ms per tuple while `slow-COMPONENT` exists, computes while
    `busy-COMPONENT` exists; raises once when `raise-COMPONENT` appears."""

    outputs = ["n"]
    passes_on = True

    def prepare(self, config, context, collector):
        self._flags(config, context)
        self.metrics = context.metrics

    def execute(self, tup):
        self._check()
        self.metrics.count("passed")  # a custom metric (runtime.api.metrics)
        if tup.values[0] % 50 < 2:  # both tasks: a shuffle alternates odd and even numbers
            log.debug("%s passes %s", self.component, tup.values[0])
        if self.slow:
            time.sleep(0.02)
        if self.busy:
            crunch()
        if self.passes_on:
            self.collector.emit([tup.values[0]], anchors=tup)
        self.collector.ack(tup)


class Sink(Work):
    """The same, acking what it gets without passing it on."""

    outputs = None
    passes_on = False
