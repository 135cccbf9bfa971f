"""A streamparse project, unchanged, in-process vs. as multilang subprocesses, in one run.

    python benchmarks/wordcount_shim.py [--seconds S] [--rounds R] [--max-pending P] [--json FILE]

Runs examples/storm_topologies/wordcount (a word spout, two counting bolts behind a
fields grouping, at-least-once acking) first with every component in its task's own
process under pystorm's loop, then with every component as a multilang subprocess
speaking Storm's JSON protocol to its task, as Storm runs it. Each run lasts a fixed
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


def run(multilang: bool, seconds: float, max_pending: int) -> dict:
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
                   "heronbridge.metrics.interval.secs": METRICS_INTERVAL}
        project = load_project(PROJECT, name, None, options, multilang,
                               home.workdir(name) / "resources")
        launch = Launch(project.plan, home, install=project.install_resources)
        state = launch.state
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
        before = begin[task.task_id, task.container]
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


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f} ms"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=12.0, help="length of each run")
    parser.add_argument("--rounds", type=int, default=1,
                        help="pairs of runs (in-process, then multilang); the median is shown")
    parser.add_argument("--max-pending", type=int, default=1000,
                        help="topology.max.spout.pending, the same in both modes")
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args()
    rounds = []
    for _ in range(args.rounds):
        inproc = run(False, args.seconds, args.max_pending)
        multi = run(True, args.seconds, args.max_pending)
        rounds.append({"in_process": inproc, "multilang": multi,
                       "ratio": inproc["sink_per_s"] / multi["sink_per_s"]})
    rounds.sort(key=lambda r: r["ratio"])
    middle = rounds[len(rounds) // 2]
    print(f"streamparse word count (1 spout task, 2 count tasks, at-least-once), "
          f"{args.seconds:.0f} s a run, max spout pending {args.max_pending}, "
          f"{os.cpu_count()} cores")
    for label, key in (("in-process (pystorm in the task)", "in_process"),
                       ("multilang (Storm's JSON protocol)", "multilang")):
        r = middle[key]
        cpu = r["cpu_us_per_sink_tuple"]
        print(f"  {label:<34}: {r['sink_per_s']:>9,.0f} sink tuples/s, complete latency "
              f"p50 {_ms(r['p50_ms'])}, p99 {_ms(r['p99_ms'])}")
        print(f"  {'':<34}  CPU us per sink tuple: total {sum(cpu.values()):.1f} = " + ", ".join(
            f"{k} {v:.1f}" for k, v in sorted(cpu.items(), key=lambda kv: -kv[1]) if v >= 0.05))
    ratios = ", ".join(f"{r['ratio']:.1f}" for r in rounds)
    print(f"  ratio in-process / multilang: {middle['ratio']:.1f} "
          f"(median of {len(rounds)} round(s): {ratios})")
    if args.json:
        Path(args.json).write_text(json.dumps({"rounds": rounds}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
