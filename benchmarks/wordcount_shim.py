"""A streamparse project, unchanged, under each way of hosting it, in one run.

    python benchmarks/wordcount_shim.py [--seconds S] [--rounds R] [--max-pending P]
                                        [--modes lean,pulled,multilang] [--json FILE]

Runs examples/storm_topologies/wordcount (a word spout, two counting bolts behind a
fields grouping, at-least-once acking) with every component in its task's own process
on the lean host (the runtime's loops call pystorm's methods), under pystorm's own loop
pulling from the task ("pulled"), and as a multilang subprocess speaking Storm's JSON
protocol to its task, as Storm runs it; rounds interleave the modes. Each run lasts a fixed
time; sink tuples/s is the count bolts' steady state (their own metric samples after a
warm-up), complete latency is the spout's over the same window. Prints both, their
ratio, and the CPU each process spent per sink tuple.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from measure import cpu_by_process  # noqa: E402

from heronbridge.runtime.telemetry import EXECUTE_COUNT, Histogram  # noqa: E402

PROJECT = Path(__file__).resolve().parent.parent / "examples" / "storm_topologies" / "wordcount"
METRICS_INTERVAL = 0.25


def run(mode: str, seconds: float, max_pending: int) -> dict:
    multilang = mode == "multilang"  # lean, lean-unbounded, pulled or multilang
    from heronbridge.compat.streamparse import load_project, topology_name
    from heronbridge.runtime import control
    from heronbridge.runtime.scheduler import Home
    from heronbridge.runtime.scheduler.launch import Launch

    with tempfile.TemporaryDirectory(prefix="hb-bench-") as tmp:
        home = Home(Path(tmp) / "home")
        name = topology_name(PROJECT, None)
        options = {"wordcount.rounds": 10**9,  # unbounded: the run is timed
                   "example.output.dir": str(Path(tmp) / "out"),
                   "topology.max.spout.pending": max_pending,
                   "heronbridge.metrics.interval.secs": METRICS_INTERVAL,
                   "heronbridge.storm.lean": mode.startswith("lean")}
        if mode == "lean-unbounded":  # bursts and bolt batches bounded as before 433914b
            options.update({"heronbridge.emit.batch.size.bytes": 1 << 40,
                            "heronbridge.execute.batch.time.ms": 1e9})
        project = load_project(PROJECT, name, None, options, multilang,
                               home.workdir(name) / "resources")
        launch = Launch(project.plan, home, install=project.install_resources)
        state = launch.statemgr
        launch.start(timeout=120)
        try:
            # Warm-up: a quarter of the run, at least 2 s (imports, first connections).
            warm = max(2.0, seconds / 4)
            time.sleep(warm)
            first = control.metrics(state, name)
            cpu_before = cpu_by_process()
            time.sleep(seconds - warm)
            last = control.metrics(state, name)
            cpu_after = cpu_by_process()
        finally:
            launch.stop()
    rate, executed, latency = 0.0, 0.0, Histogram()
    begin = {(t.task_id, t.container): t for t in first.tasks}
    for task in last.tasks:
        before = begin.get((task.task_id, task.container))
        if before is None:  # a process that reported only later (the stream manager's)
            continue
        if task.component == "count_bolt":
            # Each task's own sample times: a sum of exact per-task rates.
            span = (task.timestamp_ms - before.timestamp_ms) / 1000
            done = task.counters[EXECUTE_COUNT] - before.counters[EXECUTE_COUNT]
            rate += done / span
            executed += done
        if task.component == "word_spout" and "complete-latency" in task.histograms:
            old = before.histograms.get("complete-latency")
            old_counts = list(old.counts) if old is not None else []
            latency.merge([c - (old_counts[i] if i < len(old_counts) else 0)
                           for i, c in enumerate(task.histograms["complete-latency"].counts)])
    cpu = {k: v - cpu_before.get(k, 0.0) for k, v in cpu_after.items()}
    p50, p99 = latency.percentile(0.5), latency.percentile(0.99)
    return {"sink_per_s": rate, "measured_sink_tuples": executed,
            "p50_ms": p50 * 1000 if p50 is not None else None,
            "p99_ms": p99 * 1000 if p99 is not None else None,
            "cpu_us_per_sink_tuple": {k: v / executed * 1e6 for k, v in cpu.items()
                                      if executed}}


def _median(values: list) -> float | None:
    values = sorted(v for v in values if v is not None)
    return values[len(values) // 2] if values else None


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f} ms"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=12.0, help="length of each run")
    parser.add_argument("--rounds", type=int, default=1,
                        help="pairs of runs (in-process, then multilang); the median is shown")
    parser.add_argument("--max-pending", type=int, default=1000,
                        help="topology.max.spout.pending, the same in both modes")
    parser.add_argument("--modes", default="lean,pulled,multilang",
                        help="comma-separated, among lean, lean-unbounded, pulled, "
                        "multilang")
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args()
    modes = args.modes.split(",")
    rounds = []
    for _ in range(args.rounds):
        rounds.append({mode: run(mode, args.seconds, args.max_pending) for mode in modes})
    print(f"streamparse word count (1 spout task, 2 count tasks, at-least-once), "
          f"{args.seconds:.0f} s a run, max spout pending {args.max_pending}, "
          f"{os.cpu_count()} cores; medians of {len(rounds)} interleaved round(s)")
    for mode in modes:
        runs = [r[mode] for r in rounds]
        rate = _median([r["sink_per_s"] for r in runs])
        cpu = _median([sum(r["cpu_us_per_sink_tuple"].values()) for r in runs])
        instance = _median([sum(v for k, v in r["cpu_us_per_sink_tuple"].items()
                                if k.startswith("task")) for r in runs])
        print(f"  {mode:<10}: {rate:>9,.0f} sink tuples/s (runs: "
              + ", ".join(f"{r['sink_per_s']:,.0f}" for r in runs)
              + f"); complete latency p50 {_ms(_median([r['p50_ms'] for r in runs]))}, "
              f"p99 {_ms(_median([r['p99_ms'] for r in runs]))}; CPU us per sink tuple "
              f"{cpu:.1f} (tasks {instance:.1f})")
    if len(modes) > 1:
        base = modes[0]
        for mode in modes[1:]:
            ratio = _median([r[base]["sink_per_s"] / r[mode]["sink_per_s"] for r in rounds])
            print(f"  throughput {base} / {mode}: {ratio:.2f} (median of per-round ratios)")
    if args.json:
        Path(args.json).write_text(json.dumps({"rounds": rounds}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
