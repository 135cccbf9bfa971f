"""Checkpoint cost: a word count under EFFECTIVELY_ONCE with checkpoints every 1, 5 and
30 seconds, against the same topology with checkpointing off, measured in one run.

    python benchmarks/checkpoint_cost.py [--rounds 3] [--keys 1000000] [--json FILE]
    python benchmarks/checkpoint_cost.py --report FILE    # the tables of a saved run

The word count (sentences -> split x2 -> count x2 by fields, one container) keeps the
spout's offset and the counts in checkpointed state. "Off" is EFFECTIVELY_ONCE with an
interval no run reaches: the same code on every tuple (state dicts, rollback epochs on
the stream manager's data path, markers routed as data), only no checkpoint is ever
taken, so the ratios are the cost of taking checkpoints. (At-most-once would also drop
that per-tuple bookkeeping; `--at-most-once` adds it as a row for reference.)

Per configuration and round, one topology:
- p99 latency at a fixed load: the spout emits at a fixed rate (a quarter of the sink
  rate the first "off" run reached at saturation) and stamps each sentence with the time it
  emitted it; the count bolt records, for every 16th word, how long ago its sentence
  was emitted (end-to-end: spout, split, count, two stream manager hops);
- then throughput: the spout emits as fast as it can, and the sink tuples/s are the
  count bolts' words counted per second (under effectively-once there are no acks, so
  a saturated spout is held back only by backpressure: latency at saturation says how
  full the queues are, not what a checkpoint costs, hence the fixed load for latency).
Each phase lasts a whole number of intervals (5 s; 30 s for the 30-second interval), so
it holds as many checkpoints as the steady state does. Rounds interleave the configurations (the
host's speed drifts); per configuration the median over rounds is reported, and the
median of its ratios to the "off" run of the same round. A default run takes about six
minutes on two cores (the 30-second interval alone needs two 30-second phases a round).

Then one checkpoint of a task holding `--keys` keys (a count bolt whose state is filled
with that many words): its size and time from the checkpoint coordinator's counters
(`__checkpoints__`: last-checkpoint-bytes, last-checkpoint-secs: from the round's start
to every task's state stored, which the one big save dominates), and the rollback after
its task is SIGKILLed (last-rollback-secs: every task rebuilt and restored, the killed
one in a new process; and the task's own "restored from ... in" time: read, unpickle,
build). For reference, the same dict pickled and saved, then loaded and unpickled, in
this process, by the runtime's own storage class.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import pickle
import re
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples" / "runtime"))

from wordcount import SENTENCES  # noqa: E402

from heronbridge.runtime import Bolt, Grouping, Spout, Stateful, TopologyBuilder  # noqa: E402

SAMPLE_EVERY = 16  # words between latency samples at a count task
OFF = 1e9  # seconds: an interval no run reaches
INTERVALS = {"off": OFF, "1 s": 1, "5 s": 5, "30 s": 30}
PHASE_SECS = {"off": 5, "1 s": 5, "5 s": 5, "30 s": 30, "at-most-once": 5}
WARMUP_SECS = 1.0
LOAD_SHARE = 0.25  # the fixed load, as a share of the first run's sink rate at saturation


# -- the word count ----------------------------------------------------------------------


def _control(out: str) -> tuple[str, float]:
    """What the harness wants of the spout now: ("max" | "rate" | "stop", rate)."""
    try:
        mode, rate = (Path(out) / "load").read_text().split()
        return mode, float(rate)
    except (OSError, ValueError):
        return "stop", 0.0


class StampedSpout(Stateful, Spout):
    """Sentences stamped with the wall-clock time they were emitted; the offset is in the
    state. As fast as it can, at a fixed rate, or not at all, as bench.out/load says."""

    outputs = ["sentence", "at"]

    def open(self, config, context, collector):
        self.out = config["bench.out"]
        self.state.setdefault("offset", 0)
        self.mode, self.rate = "stop", 0.0
        self.next_check = 0.0
        self.since, self.sent = time.monotonic(), 0

    def next_tuple(self):
        now = time.monotonic()
        if now >= self.next_check:
            self.next_check = now + 0.1
            mode, rate = _control(self.out)
            if (mode, rate) != (self.mode, self.rate):
                self.mode, self.rate, self.since, self.sent = mode, rate, now, 0
        if self.mode == "stop" or self.mode == "rate" and \
                self.sent >= (now - self.since) * self.rate:
            time.sleep(0.0005)
            return
        offset = self.state["offset"]
        self.collector.emit([SENTENCES[offset % len(SENTENCES)], time.time()])
        self.state["offset"] = offset + 1
        self.sent += 1


class StampedSplit(Bolt):
    outputs = ["word", "at"]

    def execute(self, tup):
        sentence, at = tup.values
        for word in sentence.split():
            self.collector.emit([word, at])


class LatencyCount(Stateful, Bolt):
    """Counts words in its state; every SAMPLE_EVERY words appends "time latency count"
    to bench.out/count-TASK.txt. With bench.keys, an empty state is first filled with
    that many words (the big-state measurement)."""

    outputs = []

    def prepare(self, config, context, collector):
        self.path = Path(config["bench.out"]) / f"count-{context.task_id}.txt"
        self.counted = 0
        self.lines: list[str] = []
        keys = config.get("bench.keys", 0)
        if keys and not self.state:
            self.state.update((f"word{i:07d}", i) for i in range(keys))

    def execute(self, tup):
        word, at = tup.values
        self.state[word] = self.state.get(word, 0) + 1
        self.counted += 1
        if self.counted % SAMPLE_EVERY == 0:
            now = time.time()
            self.lines.append(f"{now:.4f} {now - at:.6f} {self.counted}\n")
            if len(self.lines) >= 64:
                with self.path.open("a") as f:
                    f.writelines(self.lines)
                self.lines = []


def word_count(out: Path, interval: float | None, keys: int = 0, count_par: int = 2):
    mode = {"topology.reliability.mode": "ATMOST_ONCE"} if interval is None else {
        "topology.reliability.mode": "EFFECTIVELY_ONCE",
        "topology.stateful.checkpoint.interval.secs": interval,
        "heronbridge.checkpoint.root": str(out / "checkpoints")}
    b = TopologyBuilder("checkpoint-cost", {
        **mode, "heronbridge.health": "off", "heronbridge.metrics.interval.secs": 0.2,
        "heronbridge.restart.backoff.secs": 0.1, "bench.out": str(out), "bench.keys": keys})
    spout = b.spout("sentences", StampedSpout)
    split = b.bolt("split", StampedSplit, inputs=[spout], par=2)
    b.bolt("count", LatencyCount, inputs={split: Grouping.by_fields("word")}, par=count_par)
    return b.build()


# -- the harness -----------------------------------------------------------------------


def set_load(out: Path, mode: str, rate: float = 0.0) -> None:
    tmp = out / "load.tmp"
    tmp.write_text(f"{mode} {rate}")
    tmp.replace(out / "load")


def samples(out: Path) -> dict[str, list[tuple[float, float, int]]]:
    """{count file: [(time, latency, words counted)]}"""
    found = {}
    for path in out.glob("count-*.txt"):
        rows = []
        for line in path.read_text().splitlines():
            with contextlib.suppress(ValueError):
                t, latency, n = line.split()
                rows.append((float(t), float(latency), int(n)))
        found[path.name] = rows
    return found


def sink_rate(out: Path, start: float, end: float) -> float:
    """Words counted per second between two wall-clock times, over every count task."""
    rate = 0.0
    for rows in samples(out).values():
        inside = [(t, n) for t, _, n in rows if start <= t <= end]
        if len(inside) >= 2:
            rate += (inside[-1][1] - inside[0][1]) / (inside[-1][0] - inside[0][0])
    return rate


def p99_ms(out: Path, start: float, end: float) -> float:
    latencies = sorted(lat for rows in samples(out).values() for t, lat, _ in rows
                       if start <= t <= end)
    if not latencies:
        msg = f"no latency sample between {start} and {end} in {out}"
        raise SystemExit(msg)
    return latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))] * 1000


def checkpoints(state, name: str) -> tuple[dict[str, float], dict[str, float]] | None:
    """The checkpoint coordinator's counters and gauges, or None (no answer, or none)."""
    from heronbridge.runtime import control
    from heronbridge.runtime.checkpoint.coordinator import COMPONENT
    from heronbridge.runtime.errors import RuntimeKernelError

    try:
        report = control.metrics(state, name, timeout=2.0)
    except RuntimeKernelError:
        return None
    task = next((t for t in report.tasks if t.component == COMPONENT), None)
    return (dict(task.counters), dict(task.gauges)) if task is not None else None


def executed(state, name: str) -> dict[int, tuple[float, float]]:
    """{count task: (when its metrics were sampled, tuples it executed)}: the runtime's
    own sink count."""
    from heronbridge.runtime import control

    return {t.task_id: (t.timestamp_ms / 1000, t.counters["execute-count"])
            for t in control.metrics(state, name).tasks if t.component == "count"}


def wait_for(condition, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(0.1)
    msg = f"timed out after {timeout}s waiting for {what}"
    raise SystemExit(msg)


def rolled_back(state, name: str, rollbacks: int = 1):
    """The coordinator's counters and gauges once `rollbacks` rollbacks are done."""
    found = checkpoints(state, name)
    done = found is not None and found[0]["rollbacks"] >= rollbacks and not found[1]["restoring"]
    return found if done else None


def drained(out: Path, quiet: float = 0.5) -> None:
    """Wait until no count task has sampled a word for `quiet` seconds."""
    def still() -> bool:
        before = {p: p.stat().st_size for p in out.glob("count-*.txt")}
        time.sleep(quiet)
        return before == {p: p.stat().st_size for p in out.glob("count-*.txt")}
    wait_for(still, 120, "the queues to drain")


def run(label: str, folder: Path, rate: float | None) -> dict:
    """One configuration: a fixed-load phase (latency), then a saturated one (sink rate).
    Without `rate` (the first run), a short saturated phase picks it first."""
    from heronbridge.runtime.scheduler import Home
    from heronbridge.runtime.scheduler.launch import Launch

    out = folder / label.replace(" ", "")
    out.mkdir(parents=True)
    plan = word_count(out, INTERVALS.get(label))
    phase = PHASE_SECS[label]
    launch = Launch(plan, Home(folder / f"home-{label.replace(' ', '')}"))
    launch.start()
    try:
        if label != "at-most-once":
            wait_for(lambda: rolled_back(launch.state, plan.name), 60, "the first rollback")
        time.sleep(WARMUP_SECS)
        if rate is None:
            set_load(out, "max")
            began = time.time()
            time.sleep(3)
            rate = sink_rate(out, began + 1, time.time()) * LOAD_SHARE / words_per_sentence()
            set_load(out, "stop")
            drained(out)
        set_load(out, "rate", rate)
        time.sleep(0.3)
        fixed = (time.time(), time.time() + phase)
        time.sleep(phase)
        set_load(out, "max")
        time.sleep(0.3)
        saturated = (time.time(), time.time() + phase)
        first = executed(launch.state, plan.name)
        time.sleep(phase)
        last = executed(launch.state, plan.name)
        counters = (checkpoints(launch.state, plan.name) or ({}, {}))[0]
    finally:
        launch.stop()
    return {"label": label, "rate": rate, "offered_words_per_s": rate * words_per_sentence(),
            "sink_per_s": sum((last[t][1] - first[t][1]) / (last[t][0] - first[t][0])
                              for t in first),
            "sampled_sink_per_s": sink_rate(out, *saturated), "p99_ms": p99_ms(out, *fixed),
            "fixed_load_sink_per_s": sink_rate(out, *fixed),
            "checkpoints": counters.get("checkpoints-completed", 0),
            "given_up": counters.get("checkpoints-given-up", 0),
            "checkpoint_secs": counters.get("last-checkpoint-secs")}


def words_per_sentence() -> float:
    return sum(len(s.split()) for s in SENTENCES) / len(SENTENCES)


def big_state(folder: Path, keys: int) -> dict:
    """One checkpoint and one rollback of a count task holding `keys` keys."""
    from heronbridge.runtime.checkpoint import CheckpointStorage
    from heronbridge.runtime.procfs import descendants
    from heronbridge.runtime.scheduler import Home
    from heronbridge.runtime.scheduler.launch import Launch

    out = folder / "big"
    out.mkdir(parents=True)
    plan = word_count(out, 2, keys=keys, count_par=1)
    launch = Launch(plan, Home(folder / "home-big"))
    launch.start()
    state, name = launch.state, plan.name
    try:
        set_load(out, "rate", 200)

        def saved_big():
            found = checkpoints(state, name)
            return found if found and found[0]["last-checkpoint-bytes"] > keys else None
        counters = wait_for(saved_big, 120, f"a checkpoint holding {keys:,} keys")[0]
        task = next(p for p in descendants() if p.kind == "task" and "--task" in p.cmd
                    and p.cmd[p.cmd.index("--task") + 1] == str(count_task(plan)))
        killed_at = time.monotonic()
        os.kill(task.pid, signal.SIGKILL)
        after = wait_for(lambda: rolled_back(state, name, 2), 120,
                         "the rollback after the kill")[0]
        kill_to_processing = time.monotonic() - killed_at
        log = next(launch.workdir.glob(f"container-*/logs/task-{count_task(plan)}-count.log"))
        restored = [float(s) for s in re.findall(r"restored from \d+ in ([\d.]+)s",
                                                 log.read_text())]
    finally:
        launch.stop()
    # The same dict through the runtime's own storage, in this process, for reference.
    data = {f"word{i:07d}": i for i in range(keys)}
    storage = CheckpointStorage(str(folder / "reference"), name, os.urandom(32))
    began = time.perf_counter()
    blob = pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL)
    pickled = time.perf_counter()
    storage.save("1", "count", 1, blob)
    saved = time.perf_counter()
    pickle.loads(storage.load("1", "count", 1))  # noqa: S301 - written just above
    loaded = time.perf_counter()
    return {"keys": keys, "checkpoint_bytes": counters["last-checkpoint-bytes"],
            "checkpoint_secs": counters["last-checkpoint-secs"],
            "rollback_secs": after["last-rollback-secs"],
            "kill_to_processing_secs": kill_to_processing,
            "task_restore_secs": restored[-1] if restored else None,
            "pickle_secs": pickled - began, "save_secs": saved - pickled,
            "load_unpickle_secs": loaded - saved, "bytes": len(blob)}


def count_task(plan) -> int:
    from heronbridge.runtime.plan import TaskLayout

    return TaskLayout.of(plan).component_tasks["count"][0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--at-most-once", action="store_true",
                        help="also run the word count at-most-once (no state, no epochs)")
    parser.add_argument("--json", help="write the figures to this file")
    parser.add_argument("--report", metavar="FILE", help="print the tables of a --json file "
                        "written before, and measure nothing")
    args = parser.parse_args()
    if args.report:
        report(json.loads(Path(args.report).read_text()))
        return 0
    labels = [*INTERVALS, *(["at-most-once"] if args.at_most_once else [])]
    runs: dict[str, list[dict]] = {label: [] for label in labels}
    began = time.monotonic()
    rate = None
    with tempfile.TemporaryDirectory(prefix="hb-checkpoint-cost-") as tmp:
        for n in range(args.rounds):
            for label in labels:
                result = run(label, Path(tmp) / f"round-{n}", rate)
                rate = result["rate"]
                runs[label].append(result)
                print(f"  round {n + 1}: {label:>12}: {result['sink_per_s']:>8,.0f} sink "
                      f"tuples/s (from its samples {result['sampled_sink_per_s']:,.0f}), "
                      f"p99 {result['p99_ms']:6.1f} ms at "
                      f"{result['offered_words_per_s']:,.0f} words/s, "
                      f"{result['checkpoints']:.0f} checkpoints completed, "
                      f"{result['given_up']:.0f} given up", flush=True)
        big = big_state(Path(tmp), args.keys)
    figures = {"runs": runs, "big_state": big, "cores": os.cpu_count(),
               "seconds": time.monotonic() - began}
    report(figures)
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))
    return 0


def report(figures: dict) -> None:
    """The table: per configuration the median over rounds of its sink rate and p99, and
    the median of its per-round ratios to the "off" run of the same round."""
    runs, big = figures["runs"], figures["big_state"]
    rounds = len(runs["off"])
    print(f"\nword count under EFFECTIVELY_ONCE (sentences -> split x2 -> count x2, one "
          f"container, {figures.get('cores', '?')} cores), {rounds} interleaved rounds; p99 "
          f"end-to-end latency at a fixed {runs['off'][0]['offered_words_per_s']:,.0f} "
          f"words/s; 'off' = EFFECTIVELY_ONCE with no checkpoint ever taken; 'vs off' = "
          f"median of the rounds' ratios to the 'off' run of the same round")
    print(f"  {'checkpoints':>12} {'sink tuples/s':>14} {'vs off':>7} {'p99 ms':>8} "
          f"{'vs off':>7} {'completed':>10} {'given up':>9}   rounds: sink tuples/s; p99 ms")
    for label, rs in runs.items():
        sink = statistics.median(r["sink_per_s"] for r in rs)
        p99 = statistics.median(r["p99_ms"] for r in rs)
        sink_ratio = statistics.median(r["sink_per_s"] / o["sink_per_s"]
                                       for r, o in zip(rs, runs["off"], strict=True))
        p99_ratio = statistics.median(r["p99_ms"] / o["p99_ms"]
                                      for r, o in zip(rs, runs["off"], strict=True))
        done = sum(r["checkpoints"] for r in rs)
        given_up = sum(r.get("given_up", 0) for r in rs)
        spread = ", ".join(f"{r['sink_per_s'] / 1000:,.0f}k" for r in rs) + "; " + \
            ", ".join(f"{r['p99_ms']:.0f}" for r in rs)
        print(f"  {label:>12} {sink:>14,.0f} {sink_ratio:>7.2f} {p99:>8.1f} {p99_ratio:>7.2f} "
              f"{done:>10.0f} {given_up:>9.0f}   {spread}")
    print(f"\none checkpoint of a count task holding {big['keys']:,} keys: "
          f"{big['checkpoint_bytes'] / 1e6:.1f} MB in {big['checkpoint_secs']:.2f} s "
          f"(round start to every task stored)")
    print(f"  SIGKILL of that task: processing again {big['kill_to_processing_secs']:.2f} s "
          f"later (loss reported, task restarted, rollback); the rollback itself "
          f"{big['rollback_secs']:.2f} s (every task rebuilt and restored), of which the "
          f"killed task's own restore (read, unpickle, build) {_secs(big['task_restore_secs'])}")
    print(f"  the same dict in this process through the runtime's storage: pickle "
          f"{big['pickle_secs']:.2f} s, save (write + fsync) {big['save_secs']:.2f} s, "
          f"load + unpickle {big['load_unpickle_secs']:.2f} s, {big['bytes'] / 1e6:.1f} MB")
    if "seconds" in figures:
        print(f"  whole benchmark: {figures['seconds']:.0f} s")


def _secs(value: float | None) -> str:
    return "not logged" if value is None else f"{value:.2f} s"


if __name__ == "__main__":
    sys.exit(main())
