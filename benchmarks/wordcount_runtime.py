"""Word count on the runtime vs. the fused ceiling, measured in one run.

    python benchmarks/wordcount_runtime.py [--sentences N] [--max-pending P] [--sample PCT]
                                           [--json FILE]

Three stages, spout -> split -> count (fields grouping), at-least-once acking. The fused
ceiling calls the same component code in one process with no transport: every tuple
goes straight from emit to the next component's execute. The runtime runs the same
components as processes behind a stream manager. Sink tuples are the count bolt's
executes (words); the runtime's rate is its steady state (between 10% and 90% of the
words, from the count task's own metrics), the fused rate is the whole loop. Prints
sink tuples/s for both, their ratio, and the runtime's p50 and p99 complete latency.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples" / "runtime"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from measure import (  # noqa: E402
    cpu_by_process,
    steady_rate,
    warn_if_tasks_run_another_heronbridge,
)
from wordcount import SENTENCES, CountBolt, SentenceSpout, SplitBolt  # noqa: E402

from heronbridge.runtime import Grouping, TopologyBuilder  # noqa: E402
from heronbridge.runtime.api import tuple_class  # noqa: E402

WORDS_PER_ROUND = sum(len(s.split()) for s in SENTENCES)
METRICS_INTERVAL = 0.2


class TimedSpout(SentenceSpout):
    """Records when the first tuple left (one comparison per next_tuple, on both sides)."""

    def open(self, config, context, collector):
        super().open(config, context, collector)
        self.result = Path(config["bench.result"]) if "bench.result" in config else None

    def next_tuple(self):
        if self.sent == 0 and self.result is not None:
            self.result.write_text(str(time.time()))
        super().next_tuple()


# -- the fused ceiling -------------------------------------------------------------


class _Direct:
    """A collector that calls the next component at once (no batching, no transport)."""

    def __init__(self, component, stream_fields, downstream):
        self.tuple = tuple_class(component, "default", 1, stream_fields)
        self.downstream = downstream

    def emit(self, values, msg_id=None, stream="default", anchors=None, direct_task=None):
        if self.downstream is not None:
            self.downstream(self.tuple(values))
        return (1,)

    def ack(self, tup):
        pass

    def fail(self, tup):
        pass


def fused(sentences: int) -> dict:
    config = {"wordcount.sentences": sentences}
    count, split, spout = CountBolt(), SplitBolt(), TimedSpout()
    count.collector = _Direct("count", ("word", "count"), None)
    count.prepare(config, None, count.collector)
    split.collector = _Direct("split", ("word",), count.execute)
    split.prepare(config, None, split.collector)
    spout.collector = _Direct("sentences", ("sentence",), split.execute)
    spout.open(config, None, spout.collector)
    t0 = time.perf_counter()
    for _ in range(sentences):
        spout.next_tuple()
        spout.ack(None)
    seconds = time.perf_counter() - t0
    words = sum(count.counts.values())
    return {"words": words, "seconds": seconds, "words_per_s": words / seconds}


# -- the runtime --------------------------------------------------------------------


def runtime(sentences: int, max_pending: int, containers: int, timeout: float,
            mode: str = "ATLEAST_ONCE", sample: float = 0.0) -> dict:
    from heronbridge.cli.status import totals_from_report
    from heronbridge.runtime import control
    from heronbridge.runtime.scheduler import Home
    from heronbridge.runtime.scheduler.launch import Launch

    words = sentences // len(SENTENCES) * WORDS_PER_ROUND + sum(
        len(s.split()) for s in SENTENCES[:sentences % len(SENTENCES)])
    with tempfile.TemporaryDirectory(prefix="hb-bench-") as tmp:
        result = Path(tmp) / "started"
        builder = TopologyBuilder("bench-wordcount", {
            "topology.reliability.mode": mode,
            "topology.max.spout.pending": max_pending,
            "topology.stmgrs": containers,
            # Frequent samples: the run ends at the first sample in which the count bolt
            # has executed every word, so no component needs code of the benchmark's.
            "heronbridge.metrics.interval.secs": METRICS_INTERVAL,
            "wordcount.sentences": sentences,
            "bench.result": str(result),
        })
        spout = builder.spout("sentences", TimedSpout)
        split = builder.bolt("split", SplitBolt, inputs=[spout])
        builder.bolt("count", CountBolt, inputs={split: Grouping.by_fields("word")})
        plan = builder.build()
        launch = Launch(plan, Home(Path(tmp) / "home"))
        state = launch.statemgr
        launch.start()
        try:
            if sample:  # Storm's debug sampling of the split bolt's words, from the start
                control.set_sampling(state, plan.name, "split", sample)
            cpu_before = cpu_by_process()
            deadline = time.monotonic() + timeout
            finished = acked = cpu = None
            samples: dict[float, float] = {}  # count task's sample time -> words executed
            while finished is None or (mode == "ATLEAST_ONCE" and acked is None):
                if time.monotonic() > deadline:
                    totals = totals_from_report(control.metrics(state, plan.name))
                    detail = {n: dict(t.counters) for n, t in totals.items()}
                    msg = (f"the runtime did not finish {sentences} sentences in {timeout}s; "
                           f"counters: {json.dumps(detail, indent=1)}")
                    raise SystemExit(msg)
                time.sleep(METRICS_INTERVAL / 4)
                report = control.metrics(state, plan.name)
                for task in report.tasks:
                    if task.component == "count":
                        samples[task.timestamp_ms / 1000] = task.counters["execute-count"]
                        if task.counters["execute-count"] >= words:
                            finished = finished or task.timestamp_ms / 1000
                    if task.component == "sentences" and task.counters["ack-count"] >= sentences:
                        acked = acked or task.timestamp_ms / 1000
                if finished is not None and cpu is None:
                    cpu = {k: v - cpu_before.get(k, 0.0) for k, v in cpu_by_process().items()}
            time.sleep(2 * METRICS_INTERVAL)  # every spout's last latency sample
            report = control.metrics(state, plan.name)
        finally:
            launch.stop()
        seconds = finished - float(result.read_text())
        steady = steady_rate(samples, words)
        totals = totals_from_report(report)
        latency = totals["sentences"].latency
        p50, p99 = latency.percentile(0.5), latency.percentile(0.99)
        return {"words": words, "seconds": seconds, "words_per_s": steady,
                "whole_run_words_per_s": words / seconds,
                "p50_ms": p50 * 1000 if p50 is not None else None,
                "p99_ms": p99 * 1000 if p99 is not None else None,
                "rss_mb": {name: t.max_rss / 2**20 for name, t in totals.items()},
                "cpu_us_per_word": {k: v / words * 1e6 for k, v in cpu.items()},
                "execute_us_per_tuple": {
                    n: t.counters.get("execute-time-ns", 0) / t.counters["execute-count"] / 1e3
                    for n, t in totals.items() if t.counters.get("execute-count")}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=600_000)
    parser.add_argument("--max-pending", type=int, default=10_000)
    parser.add_argument("--containers", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--rounds", type=int, default=3,
                        help="runtime rounds, each paired with fused runs around it")
    parser.add_argument("--mode", default="ATLEAST_ONCE", choices=["ATLEAST_ONCE", "ATMOST_ONCE"],
                        help="delivery (at-most-once acks at once: no complete latency)")
    parser.add_argument("--sample", type=float, default=0.0, metavar="PCT",
                        help="sample PCT%% of the split bolt's words (event sampling's cost)")
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args()
    warn_if_tasks_run_another_heronbridge()
    # The host is shared and its speed drifts by tens of percent over minutes: each
    # runtime round is paired with fused runs right before and after it, and the ratio
    # reported is the median of the rounds' ratios.
    rounds = []
    before = fused(args.sentences)
    for _ in range(args.rounds):
        run = runtime(args.sentences, args.max_pending, args.containers, args.timeout,
                      args.mode, args.sample)
        after = fused(args.sentences)
        ceiling = (before["words_per_s"] + after["words_per_s"]) / 2
        rounds.append({"runtime": run, "fused_before": before, "fused_after": after,
                       "ratio": run["words_per_s"] / ceiling})
        before = after
    rounds.sort(key=lambda r: r["ratio"])
    middle = rounds[len(rounds) // 2]
    run, ratio = middle["runtime"], middle["ratio"]
    ceiling = {"words_per_s": (middle["fused_before"]["words_per_s"]
                               + middle["fused_after"]["words_per_s"]) / 2}
    print(f"word count, {args.sentences:,} sentences = {run['words']:,} sink tuples, "
          f"{args.mode.lower().replace('_', '-')}, max spout pending {args.max_pending}, "
          f"{args.containers} container(s), {os.cpu_count()} cores"
          + (f", {args.sample:g}% of the split bolt's words sampled" if args.sample else ""))
    print("  rounds (runtime steady state, between 10% and 90% of the words / mean of the "
          "fused runs before and after it):")
    for r in sorted(rounds, key=lambda r: r["runtime"]["words_per_s"]):
        mean = (r["fused_before"]["words_per_s"] + r["fused_after"]["words_per_s"]) / 2
        print(f"    {r['runtime']['words_per_s']:>10,.0f} / {mean:>10,.0f} = {r['ratio']:.2f}"
              f"   (whole run incl. start and drain: "
              f"{r['runtime']['whole_run_words_per_s']:,.0f}/s)")
    print(f"  median round  : runtime {run['words_per_s']:,.0f} sink tuples/s, fused ceiling "
          f"{ceiling['words_per_s']:,.0f}")
    if run["p50_ms"] is not None:
        print(f"  complete latency p50 {run['p50_ms']:.1f} ms, p99 {run['p99_ms']:.1f} ms")
    print(f"  ratio runtime / fused ceiling (median of {len(rounds)} paired rounds): {ratio:.2f}")
    print("  peak RSS MB: " + ", ".join(f"{k} {v:.0f}" for k, v in sorted(run["rss_mb"].items())))
    cpu = run["cpu_us_per_word"]
    print(f"  CPU us per sink tuple: total {sum(cpu.values()):.2f} = " + ", ".join(
        f"{k} {v:.2f}" for k, v in sorted(cpu.items(), key=lambda kv: -kv[1]) if v >= 0.005))
    print("  time inside execute loops, us per executed tuple: " + ", ".join(
        f"{k} {v:.2f}" for k, v in sorted(run["execute_us_per_tuple"].items())))
    print(f"  cores busy: {sum(cpu.values()) * run['words'] / 1e6 / run['seconds']:.2f} "
          f"of {os.cpu_count()}")
    if args.json:
        Path(args.json).write_text(json.dumps({
            "fused": ceiling, "runtime": run, "rounds": rounds,
            "ratio_runtime_over_fused": ratio}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
