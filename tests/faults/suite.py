"""The fault suite's driver: a workload running, nemeses inflicted on it (one alone, or a
random seeded schedule), then what came out judged, one table row per run.

Workloads (each judged by its output, never by processes being back):
- `RelayWorkload`: issue 25's shape, on streamparse (pystorm's ReliableSpout with its
  defaults) or heronpy; at least once: every id whose ack reached the spout is in a
  sink's file;
- `DurableWorkload`: the durable word count (examples/storm_topologies/durable): every
  line acked, every word occurrence of an acked line counted;
- `ExactWorkload`: an effectively-once word count (runtime API, heronpy or streamparse;
  tests/faults/checkpointkit.py): every final count exact.

Recovery: from the nemesis' heal (or kill) until the workload progresses again at half
its rate before the nemesis (acks heard by the spout; effectively once, checkpoints
completed), over a second: the start of the first such second.
"""

from __future__ import annotations

import json
import os
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from checkpointkit import Coordinator, ExactRun
from faultkit import DurableRun
from nemeses import Nemesis, Stage, inflict
from relaykit import RelayRun

from heronbridge.runtime.plan import TaskLayout

SIZES = ("ci", "full")


def size() -> str:
    """$HERONBRIDGE_FAULTS_SIZE: `ci` (the default: each nemesis once, one short random
    schedule) or `full` (every workload and layout, long schedules, 20 runs of the
    issue-25 shape per victim)."""
    value = os.environ.get("HERONBRIDGE_FAULTS_SIZE", "ci")
    if value not in SIZES:
        msg = f"HERONBRIDGE_FAULTS_SIZE expects one of {SIZES}, received {value!r}"
        raise ValueError(msg)
    return value


@dataclass
class Row:
    nemesis: str
    workload: str
    containers: int
    scheduler: str
    lost: int
    max_fails: int
    p99_fails: int
    replays: int
    duplicates: int
    recovery_s: list[float] = field(default_factory=list)
    seed: int | None = None
    detail: str = ""

    def cells(self) -> list[str]:
        rec = "-" if not self.recovery_s else (
            f"{self.recovery_s[0]:.1f}" if len(self.recovery_s) == 1
            else f"{max(self.recovery_s):.1f} (max of {len(self.recovery_s)})")
        return [self.nemesis, self.workload, str(self.containers), self.scheduler,
                str(self.lost), str(self.max_fails), str(self.p99_fails), str(self.replays),
                str(self.duplicates), rec]


HEAD = ["nemesis", "workload", "containers", "scheduler", "ids lost", "fails/id max",
        "fails/id p99", "replays", "duplicates", "recovery s"]


def p99(values: list[int]) -> int:
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * 0.99))] if values else 0


class RelayWorkload:
    guarantee = "at least once"

    def __init__(self, home, state, tmp: Path, containers: int, api: str = "streamparse",
                 ids: int = 3000, rate: float = 100, options: dict | None = None,
                 spark: object = None) -> None:
        self.run = RelayRun(home, state, tmp, containers, ids=ids, rate=rate, options=options,
                            api=api, spark=spark)
        self.name = f"ReliableSpout relay ({api})"
        self.running, self.containers = self.run.running, containers
        self.topology = self.run.plan.name
        self.layout, self.packing = self.run.layout, self.run.packing

    def started(self) -> bool:
        return self.run.acks() > 0

    def progress(self) -> int:
        return self.run.acks()

    def done(self) -> bool:
        return self.run.done()

    def snapshot(self) -> tuple[set, Counter, Counter]:
        """(ids acked, ids seen by a sink with how often, fails per id), so far."""
        v = self.run.verdict()
        return v.acked, v.seen, v.fails

    def finish(self, timeout: float) -> Row:
        self.run.wait(self.run.done, timeout, "every id acked", interval=0.25)
        v = self.run.verdict()
        return Row("", self.name, self.containers, "", len(v.lost), v.max_fails,
                   v.p99_fails(), v.replays, v.duplicates,
                   detail=f"{v.summary()}; lost ids {v.lost[:20]}")


class DurableWorkload:
    guarantee = "at least once"

    def __init__(self, home, state, tmp: Path, containers: int, lines: int = 4000) -> None:
        self.run = DurableRun(home, state, tmp, containers, lines)
        self.name = "durable word count"
        self.running, self.containers = self.run.running, containers
        self.topology = self.run.plan.name
        self.layout, self.packing = TaskLayout.of(self.run.plan), self.run.packing

    def events(self) -> list[dict]:
        found = []
        try:
            text = self.run.acks.path.read_text()
        except FileNotFoundError:
            return found
        for line in text.splitlines():
            try:
                found.append(json.loads(line))
            except json.JSONDecodeError:
                continue
        return found

    def started(self) -> bool:
        return self.run.acks.poll() > 0

    def progress(self) -> int:
        return self.run.acks.poll()

    def done(self) -> bool:
        return self.run.complete()

    def finish(self, timeout: float) -> Row:
        deadline = time.monotonic() + timeout
        while not self.run.complete():
            assert time.monotonic() < deadline, self.run.missing()
            self.run.running.check()
            time.sleep(0.25)
        events = self.events()
        acked = {e["id"] for e in events if e["event"] == "ack"}
        fails = Counter(e["id"] for e in events if e["event"] == "fail")
        counted = Counter((r["offset"], r["position"]) for r in self._counted_records())
        lost = {n for n, _ in self.run.expected() - set(counted) if n in acked}
        return Row("", self.name, self.containers, "", len(lost),
                   max(fails.values(), default=0),
                   p99([fails.get(n, 0) for n in range(len(self.run.text))]),
                   sum(fails.values()), sum(c - 1 for c in counted.values() if c > 1),
                   detail=f"lines never counted though acked: {sorted(lost)[:20]}")

    def _counted_records(self) -> list[dict]:
        found = []
        for path in self.run.out.glob("count-*.jsonl"):
            for line in path.read_text().splitlines():
                try:
                    found.append(json.loads(line))
                except json.JSONDecodeError:
                    continue
        return found


class ExactWorkload:
    guarantee = "effectively once"

    def __init__(self, count, home, state, seed: int = 0) -> None:
        self.run = ExactRun(count, home, state, seed)
        self.name = f"effectively-once word count ({count.api})"
        self.running, self.containers = self.run.running, 3
        self.topology = count.plan.name
        self.layout, self.packing = self.run.layout, self.run.packing
        self.coordinator: Coordinator = self.run.coordinator

    def started(self) -> bool:
        return self.run.consistent() is not None

    def progress(self) -> int:
        totals = self.coordinator.poll() or self.coordinator.totals()
        return int(totals["checkpoints-completed"])

    def done(self) -> bool:
        return self.run.all_read() is not None

    def finish(self, timeout: float) -> Row:
        deadline = time.monotonic() + timeout
        checkpoint = None
        while checkpoint is None:
            assert time.monotonic() < deadline, self.run.missing()
            self.run.running.check()
            checkpoint = self.run.all_read()
            time.sleep(0.2)
        counted = self.run.counted(checkpoint)
        expected = self.run.count.expected
        under = sum(max(0, n - counted[w]) for w, n in expected.items())
        over = sum(max(0, counted[w] - expected.get(w, 0)) for w in counted)
        return Row("", self.name, self.containers, "", under, 0, 0, self.run.rollbacks(),
                   over, detail=f"counts: {under} under, {over} over the input's")


def stage_for(workload, tmp: Path, **handles) -> Stage:
    return Stage(workload.topology, workload.containers, tmp, layout=workload.layout,
                 packing=workload.packing, **handles)


def _wait(workload, condition, timeout: float, what: str) -> float:
    began = time.monotonic()
    while not condition():
        if time.monotonic() - began > timeout:
            logs = workload.running.logs()[-20000:]
            msg = f"timed out after {timeout}s waiting for {what}\n{logs}"
            raise AssertionError(msg)
        workload.running.check()
        time.sleep(0.1)
    return time.monotonic() - began


BASELINE_SECS = 2.0  # progress measured this long before a nemesis: the normal rate


def _progress_rate(workload, secs: float) -> float:
    before, began = workload.progress(), time.monotonic()
    while time.monotonic() < began + secs:
        workload.running.check()
        time.sleep(0.1)
    return (workload.progress() - before) / secs


def strike(workload, stage: Stage, nemesis: Nemesis) -> tuple[str, float]:
    """Inflict one nemesis; returns (what was done, seconds from its heal until the
    workload progresses at half its rate before the nemesis again, over a second)."""
    rate = _progress_rate(workload, BASELINE_SECS)
    done, healed = inflict(stage, nemesis, workload.running.check)
    samples = [(healed, workload.progress())]

    def recovered() -> bool:
        now, progress = time.monotonic(), workload.progress()
        samples.append((now, progress))
        if workload.done():
            return True
        t, then = next((t, p) for t, p in reversed(samples) if t <= now - 1.0 or t == healed)
        return now - t >= 1.0 and progress - then >= max(1.0, rate / 2)

    _wait(workload, recovered, 180, f"recovery after {done}")
    return done, max(0.0, samples[-1][0] - 1.0 - healed)


def alone(workload, stage: Stage, nemesis: Nemesis, at: float = 6.0,
          finish_timeout: float = 300) -> Row:
    """One nemesis `at` seconds after the workload's first progress."""
    _wait(workload, workload.started, 90, f"{workload.name} to make progress")
    time.sleep(at)
    done, recovery = strike(workload, stage, nemesis)
    row = workload.finish(finish_timeout)
    row.nemesis, row.recovery_s, row.detail = nemesis.name, [recovery], f"{done}; {row.detail}"
    return row


SETTLE_SECS = 8.0  # after a recovery: trees lost in the fault fail by 1.5 timeouts (5 s)


def one_by_one(workload, stage: Stage, nemeses: list[Nemesis], at: float = 0.0) -> list[Row]:
    """Each nemesis alone, one after the other on one running workload (the first `at`
    seconds after its first progress), each once the last has been recovered from and
    its trees have settled; a row for each, judged on what came out between it and the
    next (ids acked by then must be in a sink's file: the sink writes an id before it
    acks it), fails counted per id in its window."""
    _wait(workload, workload.started, 90, f"{workload.name} to make progress")
    time.sleep(at)
    rows = []
    before = workload.snapshot()
    for nemesis in nemeses:
        done, recovery = strike(workload, stage, nemesis)
        deadline = time.monotonic() + SETTLE_SECS
        while time.monotonic() < deadline:
            workload.running.check()
            time.sleep(0.2)
        after = workload.snapshot()
        fails = after[2] - before[2]
        lost = len((after[0] - set(after[1])) - (before[0] - set(before[1])))
        rows.append(Row(nemesis.name, workload.name, workload.containers, "", lost,
                        max(fails.values(), default=0), p99(list(fails.values())),
                        sum(fails.values()), _twice(after[1]) - _twice(before[1]),
                        [recovery], detail=done))
        before = after
    return rows


def _twice(seen: Counter) -> int:
    return sum(n - 1 for n in seen.values() if n > 1)


def schedule(workload, stage: Stage, catalog: list[Nemesis], seed: int, faults: int,
             gap: tuple[float, float] = (0.5, 3.0), finish_timeout: float = 600) -> Row:
    """`faults` nemeses drawn from `catalog` by `seed`, one after the other, each after a
    random gap once the last has been recovered from."""
    rng = random.Random(seed)
    _wait(workload, workload.started, 90, f"{workload.name} to make progress")
    names, recoveries = [], []
    for _ in range(faults):
        time.sleep(rng.uniform(*gap))
        nemesis = rng.choice(catalog)
        done, recovery = strike(workload, stage, nemesis)
        names.append(done)
        recoveries.append(recovery)
    row = workload.finish(finish_timeout)
    row.nemesis = f"random schedule of {faults} (seed {seed})"
    row.seed, row.recovery_s = seed, recoveries
    row.detail = "; ".join(names) + f"; {row.detail}"
    return row
