"""Write jvm/src/test/resources/step_vectors.json: the task step's policy as the Python
step (runtime/instance/spout_step.py, bolt_step.py) applies it, scenario by scenario, for
the JVM task host's steps (jvm/.../task/SpoutStep.java, BoltStep.java) to replay.

Each scenario is a config and a list of operations on the step, each with the inputs the
step read (the clock, the trees in flight, the collector's emits, the link's unsent
bytes) and what it answered, the calls it made on the component, and its state after:
the window's limit, the time the window held the spout, the counters.

Run: python scripts/step_vectors.py          (rewrites the file)
     python scripts/step_vectors.py --check  (exit 1 if it is stale)
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

import vector_files  # scripts/, beside this one

from heronbridge.runtime import Bolt, Grouping, Spout, TopologyBuilder
from heronbridge.runtime.instance.bolt_step import BoltStep
from heronbridge.runtime.instance.spout_step import SpoutStep
from heronbridge.runtime.instance.task import Task
from heronbridge.runtime.plan import TaskLayout
from heronbridge.runtime.proto import control_pb2, topology_pb2
from heronbridge.runtime.wire import frames
from heronbridge.runtime.wire.serde import make_serializer

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "jvm" / "src" / "test" / "resources" / "step_vectors.json"
KINDS = {frames.ACKED: "acked", frames.FAILED: "failed", frames.EXPIRED: "expired"}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Link:
    def __init__(self) -> None:
        self.out_bytes = 0

    def send(self, out: list[bytes]) -> None:
        pass


class Scripted(Spout):
    """Emits its next number while it has any left, each call taking `per_call` on the
    step's clock; what the step calls on it is noted."""

    outputs = ["n"]

    def open(self, config, context, collector):
        self.n, self.left, self.per_call, self.calls = 0, 0, 0.0, []
        self.clock: Clock | None = None

    def next_tuple(self):
        assert self.clock is not None
        self.clock.now += self.per_call
        if self.left:
            self.left -= 1
            self.collector.emit([self.n], msg_id=self.n)
            self.n += 1

    def ack(self, msg_id):
        self.calls.append(["ack", msg_id])

    def fail(self, msg_id):
        self.calls.append(["fail", msg_id])

    def activate(self):
        self.calls.append(["activate"])

    def deactivate(self):
        self.calls.append(["deactivate"])


class Sink(Bolt):
    def prepare(self, config, context, collector):
        self.clock: Clock | None = None
        self.per_tuple = 0.0
        self.executed = 0

    def execute(self, tup):
        assert self.clock is not None
        self.clock.now += self.per_tuple
        self.executed += 1


class Publisher:
    """Where metrics go (a task always has one once registered): it counts samples."""

    def __init__(self) -> None:
        self.samples = 0

    def publish(self, metrics: Any) -> None:
        self.samples += 1


def task_of(component: str, config: dict) -> tuple[Task, Clock, Link]:
    b = TopologyBuilder("steps", config)
    b.spout("numbers", Scripted)
    b.bolt("sink", Sink, inputs={"numbers": Grouping.SHUFFLE})
    plan = b.build()
    layout = TaskLayout.of(plan)
    task = Task("steps-1", layout.component_tasks[component][0], 0, "", "", secret=b"")
    task.attach(plan, frozenset(layout.task_component), seed=1)
    link = task.link = Link()
    task.telemetry.publisher = Publisher()
    task.start_component()
    clock = Clock()
    task.user.clock = clock
    return task, clock, link


def number(value: float) -> float | None:
    return None if math.isinf(value) else value


class SpoutScenario:
    """A spout step driven as a host drives it, every operation recorded."""

    def __init__(self, name: str, config: dict) -> None:
        self.task, self.clock, self.link = task_of("numbers", config)
        self.user: Scripted = self.task.user
        self.step = SpoutStep(self.task, self.clock)
        self.step.resume()
        self.ops: list[dict] = []
        self.vector = {"name": name, "config": config, "start": self.clock.now,
                       "ops": self.ops}

    @property
    def em(self) -> Any:
        return self.task.emitter

    def _record(self, op: dict, answer: Any, calls_before: int) -> None:
        step = self.step
        op["expect"] = answer
        op["calls"] = self.user.calls[calls_before:]
        op["after"] = {"limit": number(step.window.limit), "held_ms": step.held_ms,
                       "counts": {k: step.counts[k] for k in COUNTED},
                       "backpressure_ms": step.backpressure.blocked_ms}
        self.ops.append(op)

    def state(self, running: bool) -> None:
        before = len(self.user.calls)
        self.step.control(control_pb2.TopologyStateChange(
            state=topology_pb2.RUNNING if running else topology_pb2.PAUSED))
        self._record({"op": "state", "now": self.clock.now, "running": running}, None, before)

    def wait(self) -> float:
        before = len(self.user.calls)
        op = {"op": "wait", "now": self.clock.now, "pending": len(self.em.pending),
              "ack_now": list(self.em.ack_now), "out_bytes": self.link.out_bytes}
        answer = self.step.wait(self.clock.now)
        self._record(op, answer, before)
        return answer

    def burst(self, most: int = 10**6) -> int:
        """begin, then next_tuple and returned until the burst ends (or `most` calls)."""
        em, before = self.em, len(self.user.calls)
        op = {"op": "begin", "now": self.clock.now, "pending": len(em.pending),
              "emitted": em.emitted, "bytes_per_emit": em.bytes_per_emit}
        began = self.step.begin(self.clock.now)
        self._record(op, began, before)
        calls = 0
        while began and calls < most:
            self.user.next_tuple()
            calls += 1
            before = len(self.user.calls)
            op = {"op": "returned", "now": self.clock.now, "pending": len(em.pending),
                  "emitted": em.emitted, "ack_now": list(em.ack_now)}
            went_on = self.step.returned(self.clock.now)
            self._record(op, went_on, before)
            if not went_on:
                break
        return calls

    def flush(self) -> None:
        """The collector's flush: what it measures bounds the next burst's bytes."""
        self.task.flush()

    def settle(self, kind: int, count: int) -> None:
        """The stream manager's word on the `count` oldest trees in flight."""
        em, before = self.em, len(self.user.calls)
        roots = sorted(em.pending, key=lambda r: em.pending[r][1])[:count]
        entries = [list(em.pending[r]) for r in roots]
        frame = frames.int_frame(kind, self.task.task, roots)
        op = {"op": "settle", "kind": KINDS[kind], "now": self.clock.now, "entries": entries,
              "pending": len(em.pending) - len(roots)}
        self.step.received(frame, frames.split_frames(frame)[0])
        self._record(op, None, before)

    def due(self) -> None:
        before = len(self.user.calls)
        op = {"op": "due", "now": self.clock.now, "pending": len(self.em.pending)}
        self._record(op, number(self.step.due(self.clock.now)), before)

    def metrics(self) -> None:
        """The metrics cadence: whether a sample is due at this turn's end."""
        before = len(self.user.calls)
        publisher = self.task.telemetry.publisher
        assert isinstance(publisher, Publisher)
        samples = publisher.samples
        op = {"op": "metrics", "now": self.clock.now}
        self.step.publish_due(self.clock.now)
        self._record(op, publisher.samples != samples, before)

    def turn(self, most: int = 10**6) -> int:
        self.wait()
        calls = self.burst(most)
        self.flush()
        return calls


COUNTED = ("next-tuple-count", "ack-count", "fail-count", "timeout-count")


def spout_vectors() -> list[dict]:
    out = []

    # topology.max.spout.pending: bursts fill the window, acks free a burst's worth.
    s = SpoutScenario("max spout pending", {"topology.reliability.mode": "ATLEAST_ONCE",
                                            "topology.max.spout.pending": 8,
                                            "heronbridge.metrics.interval.secs": 2})
    s.user.left, s.user.per_call = 100, 0.0001
    s.wait()
    s.state(True)
    s.turn()  # eager after activation: one emit a burst
    s.clock.now += 0.06
    for _ in range(3):
        s.turn()
        s.clock.now += 0.01
    for _ in range(3):
        s.settle(frames.ACKED, 1)
        s.turn()
        s.clock.now += 0.004
    s.settle(frames.FAILED, 2)
    s.settle(frames.EXPIRED, 1)
    s.turn()
    s.metrics()
    s.clock.now += 2.5
    s.metrics()
    s.metrics()
    s.state(False)
    s.turn()
    out.append(s.vector)

    # A burst's calls, time and bytes.
    s = SpoutScenario("burst bounds", {"topology.reliability.mode": "ATLEAST_ONCE",
                                       "topology.max.spout.pending": 1000,
                                       "heronbridge.spout.burst": 7,
                                       "heronbridge.emit.batch.time.ms": 1,
                                       "heronbridge.emit.batch.size.bytes": 300})
    s.user.left = 1000
    s.state(True)
    s.clock.now += 0.06
    s.turn()  # ends at 300 bytes: 4 emits at 64 bytes each before any flush measured them
    s.user.per_call = 0.0003
    s.turn()  # ends past 1 ms
    s.user.per_call = 0.0
    s.turn()  # ends after 7 calls
    out.append(s.vector)

    # The latency-led window: slow start, stalls, latency over the target.
    s = SpoutScenario("latency-led window", {"topology.reliability.mode": "ATLEAST_ONCE"})
    s.user.left = 1000
    s.state(True)
    s.clock.now += 0.06
    for _ in range(4):
        s.turn()
        s.clock.now += 0.002
        s.turn()
        s.due()
        s.settle(frames.ACKED, len(s.em.pending))
    s.turn()
    s.due()
    for _ in range(3):  # nothing comes back: it doubles each second
        s.clock.now += 1.0
        s.turn()
        s.due()
    s.clock.now += 0.2
    s.settle(frames.ACKED, 3)  # 1.2 s and more: far over the 20 ms target
    s.turn()
    s.settle(frames.FAILED, 1)
    s.turn()
    out.append(s.vector)

    # An idle spout, and one that sleeps when idle: its acks are waited for.
    s = SpoutScenario("idle and sleeping", {"topology.reliability.mode": "ATLEAST_ONCE",
                                            "topology.max.spout.pending": 50})
    s.user.left = 3
    s.state(True)
    s.clock.now += 0.06
    s.turn()
    s.turn()
    s.user.per_call = 0.004
    s.turn()
    s.due()
    s.turn()
    s.clock.now += 0.005
    s.turn()
    s.clock.now += 0.01
    s.settle(frames.ACKED, 3)
    s.turn()
    out.append(s.vector)

    # At most once: message ids acked as soon as emitted; no window.
    s = SpoutScenario("at most once", {"topology.reliability.mode": "ATMOST_ONCE"})
    s.user.left = 5
    s.state(True)
    s.clock.now += 0.06
    s.turn()
    s.turn()
    out.append(s.vector)

    # Backpressure: held above the high watermark until below the low one.
    s = SpoutScenario("backpressure", {"topology.reliability.mode": "ATLEAST_ONCE",
                                       "topology.max.spout.pending": 100,
                                       "heronbridge.backpressure.high.watermark.bytes": 4096,
                                       "heronbridge.backpressure.low.watermark.bytes": 1024})
    s.user.left = 100
    s.state(True)
    s.clock.now += 0.06
    for out_bytes in (5000, 2000, 1024, 0):
        s.link.out_bytes = out_bytes
        s.turn(3)
        s.clock.now += 0.25
    out.append(s.vector)
    return out


class BoltScenario:
    def __init__(self, name: str, config: dict) -> None:
        self.task, self.clock, self.link = task_of("sink", config)
        self.user: Sink = self.task.user
        self.user.clock = self.clock
        self.flushes: list[int] = []
        self.step = BoltStep(self.task, self.clock,
                             flush=lambda: self.flushes.append(self.user.executed))
        self.step.resume()
        self.ops: list[dict] = []
        self.vector = {"name": name, "config": config, "start": self.clock.now,
                       "ops": self.ops}

    def _record(self, op: dict, answer: Any) -> None:
        step = self.step
        op["expect"] = answer
        op["after"] = {"counts": {"execute-count": step.counts["execute-count"]},
                       "ticks": step.ticks, "backpressure_ms": step.backpressure.blocked_ms}
        self.ops.append(op)

    def wait(self) -> None:
        op = {"op": "wait", "now": self.clock.now, "out_bytes": self.link.out_bytes}
        wait = self.step.wait(self.clock.now)
        self._record(op, {"wait": wait, "reading": self.step.reading})

    def done(self) -> None:
        """The turn's end: whether a tick tuple ran, and whether metrics went."""
        publisher = self.task.telemetry.publisher
        assert isinstance(publisher, Publisher)
        op = {"op": "done", "now": self.clock.now}
        ticks, samples = self.step.ticks, publisher.samples
        self.step.done(self.clock.now)
        self._record(op, {"tick": self.step.ticks != ticks,
                          "published": publisher.samples != samples})

    def batch(self, n: int, per_tuple: float) -> None:
        """A data frame of `n` tuples, each taking `per_tuple`: after which tuples the
        step flushed what they produced."""
        self.user.per_tuple, self.flushes[:] = per_tuple, []
        src = TaskLayout.of(self.task.attachment.plan).component_tasks["numbers"][0]
        blob = make_serializer("msgpack").encode([[[v]] for v in range(n)])
        frame = frames.data_frame(self.task.task, src, 0, blob)
        op = {"op": "batch", "now": self.clock.now, "tuples": n, "per_tuple": per_tuple}
        executed = self.user.executed
        self.step.received(frame, frames.split_frames(frame)[0])
        self._record(op, [f - executed for f in self.flushes])


def bolt_vectors() -> list[dict]:
    out = []
    s = BoltScenario("ticks", {"topology.tick.tuple.freq.secs": 2})
    for step in (0.0, 1.95, 0.05, 0.5, 7.0, 0.1):
        s.clock.now += step
        s.wait()
        s.done()
    out.append(s.vector)

    s = BoltScenario("long batches", {"heronbridge.execute.batch.time.ms": 1})
    s.batch(10, 0.001)
    s.batch(64, 0.0001)
    s.batch(40, 0.0004)
    out.append(s.vector)

    s = BoltScenario("backpressure", {"heronbridge.backpressure.high.watermark.bytes": 4096,
                                      "heronbridge.backpressure.low.watermark.bytes": 1024,
                                      "heronbridge.metrics.interval.secs": 0.5})
    for out_bytes in (0, 5000, 2000, 1024, 0):
        s.link.out_bytes = out_bytes
        s.wait()
        s.done()
        s.clock.now += 0.3
    out.append(s.vector)
    return out


def vectors() -> dict:
    return {"spouts": spout_vectors(), "bolts": bolt_vectors()}


def text() -> str:
    return json.dumps(vectors(), indent=1) + "\n"


def main(argv: list[str] | None = None) -> int:
    return vector_files.main(OUT, text, __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    sys.exit(main())
