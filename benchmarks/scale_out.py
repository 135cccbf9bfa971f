"""Scale-out: word count on the local scheduler and on a Spark cluster, 1, 2 and 3
containers, measured in one run.

    python benchmarks/scale_out.py [--sentences N] [--containers 1 2 3] [--json FILE]

Starts its own ZooKeeper server (Debian's `zookeeper`, as `tox -e cluster` installs) and
a Spark standalone cluster of two workers on 127.0.0.2 and 127.0.0.3 (pyspark's own
Master and Worker classes, tests/cluster/sparkcluster.py), then submits the same word
count (sentences -> split x3 -> count x3 by fields, at-least-once) on each scheduler with
each number of containers, one after another. Per run:

- sink tuples/s: the count bolt's executes in the steady state (10% to 90% of the words),
  from the topology master's metrics;
- tuples/s crossing containers: tuples a bolt received from a task in another container
  (each bolt counts its tuples by source task), over the run from first to last sink tuple;
- seconds from submit to the first sink tuple (the whole start: plan, Spark application,
  executors, containers, registration) and to every task registered.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples" / "runtime"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from measure import steady_rate  # noqa: E402
from wordcount import SENTENCES, CountBolt, SentenceSpout, SplitBolt  # noqa: E402

from heronbridge.runtime import Grouping, TopologyBuilder  # noqa: E402

WORDS_PER_ROUND = sum(len(s.split()) for s in SENTENCES)
METRICS_INTERVAL = 0.2


class _BySource:
    """Counts the tuples a bolt task receives by source task, and when the first came;
    a thread writes them to `bench.out` (the benchmark's hosts share this machine)."""

    def _start_counting(self, config, context):
        self.by_source: dict[int, int] = {}
        self.first: float | None = None
        path = Path(config["bench.out"]) / f"{context.component_id}-{context.task_id}.json"

        def write() -> None:
            while True:
                time.sleep(0.3)
                tmp = path.with_suffix(".tmp")
                tmp.write_text(json.dumps({"first": self.first, "task": context.task_id,
                                           "by_source": dict(self.by_source)}))
                tmp.replace(path)

        threading.Thread(target=write, daemon=True).start()

    def _count(self, tup):
        if self.first is None:
            self.first = time.time()
        self.by_source[tup.task] = self.by_source.get(tup.task, 0) + 1


class CountingSplit(SplitBolt, _BySource):
    def prepare(self, config, context, collector):
        self._start_counting(config, context)

    def execute(self, tup):
        self._count(tup)
        super().execute(tup)


class CountingCount(CountBolt, _BySource):
    def prepare(self, config, context, collector):
        super().prepare(config, context, collector)
        self._start_counting(config, context)

    def execute(self, tup):
        self._count(tup)
        super().execute(tup)


def word_count(out: Path, containers: int, sentences: int, max_pending: int):
    b = TopologyBuilder("scale-out", {
        "topology.reliability.mode": "ATLEAST_ONCE",
        "topology.max.spout.pending": max_pending,
        "topology.stmgrs": containers,
        "heronbridge.metrics.interval.secs": METRICS_INTERVAL,
        "heronbridge.health": "off",  # the parallelism stays as measured
        "wordcount.sentences": sentences,
        "bench.out": str(out),
    })
    spout = b.spout("sentences", SentenceSpout)
    split = b.bolt("split", CountingSplit, inputs=[spout], par=3)
    b.bolt("count", CountingCount, inputs={split: Grouping.by_fields("word")}, par=3)
    return b.build()


def words_of(sentences: int) -> int:
    return sentences // len(SENTENCES) * WORDS_PER_ROUND + sum(
        len(s.split()) for s in SENTENCES[:sentences % len(SENTENCES)])


def run(scheduler: str, containers: int, sentences: int, max_pending: int, folder: Path,
        zookeeper, spark, timeout: float) -> dict:
    from heronbridge.runtime import control
    from heronbridge.runtime.scheduler import Home
    from heronbridge.runtime.scheduler.launch import Launch
    from heronbridge.runtime.scheduler.spark import SparkOptions
    from heronbridge.runtime.statemgr import PACKING_PLANS

    out = folder / f"{scheduler}-{containers}"
    out.mkdir(parents=True)
    plan = word_count(out, containers, sentences, max_pending)
    words = words_of(sentences)
    home = Home(folder.parent / f"home-{scheduler}",
                zookeeper.uri(f"bench-{containers}") if scheduler == "spark" else None)
    state = home.open_statemgr()
    submitted = time.time()
    launch = Launch(plan, home, state, detached=True,
                    spark=SparkOptions(spark.master) if scheduler == "spark" else None)
    try:
        launch.start()
        registered = time.time() - submitted
        samples: dict[float, float] = {}
        deadline = time.monotonic() + timeout
        while True:
            if time.monotonic() > deadline:
                msg = f"{scheduler}, {containers} containers: not done within {timeout}s"
                raise SystemExit(msg)
            time.sleep(METRICS_INTERVAL / 2)
            report = control.metrics(state, plan.name)
            done = sum(t.counters["execute-count"] for t in report.tasks
                       if t.component == "count")
            samples[time.time()] = done
            if done >= words:
                break
        finished = time.time()
        time.sleep(1.0)  # the bolts' last counts reach their files
        containers_of = {i.task_id: c.id for c in state.get(PACKING_PLANS, plan.name).containers
                         for i in c.instances}
    finally:
        launch.stop()
        state.close()
    received = crossing = 0
    first = []
    for path in out.glob("*.json"):
        record = json.loads(path.read_text())
        if path.name.startswith("count-") and record["first"] is not None:
            first.append(record["first"])
        for source, n in record["by_source"].items():
            received += n
            if containers_of[int(source)] != containers_of[record["task"]]:
                crossing += n
    first_tuple = min(first)
    return {"scheduler": scheduler, "containers": containers, "words": words,
            "sink_per_s": steady_rate(samples, words),
            "whole_run_per_s": words / (finished - first_tuple),
            "crossing_per_s": crossing / (finished - first_tuple),
            "crossing_share": crossing / received,
            "submit_to_first_tuple_s": first_tuple - submitted,
            "submit_to_registered_s": registered}


def median_run(runs: list[dict]) -> dict:
    """The run of median sink rate, with the spread of all rounds."""
    ordered = sorted(runs, key=lambda r: r["sink_per_s"])
    return {**ordered[len(ordered) // 2], "sink_min": ordered[0]["sink_per_s"],
            "sink_max": ordered[-1]["sink_per_s"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=100_000)
    parser.add_argument("--max-pending", type=int, default=5_000)
    parser.add_argument("--containers", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--rounds", type=int, default=3,
                        help="rounds of every configuration, interleaved (the host's speed "
                             "drifts); the median round is reported")
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    sys.path.insert(0, str(ROOT / "tests" / "cluster"))
    from sparkcluster import SparkCluster
    from zkserver import ZooKeeperServer

    runs: dict[tuple[str, int], list[dict]] = {}
    with tempfile.TemporaryDirectory(prefix="hb-scale-out-") as tmp:
        folder = Path(tmp)
        zookeeper = ZooKeeperServer(folder / "zookeeper")
        zookeeper.start()
        spark = SparkCluster(folder / "spark")
        try:
            spark.start()
            os.environ.update({k: spark.env()[k] for k in ("SPARK_CONF_DIR", "PYSPARK_PYTHON")})
            for n in range(args.rounds):
                for containers in args.containers:
                    for scheduler in ("local", "spark"):
                        result = run(scheduler, containers, args.sentences, args.max_pending,
                                     folder / f"round-{n}", zookeeper, spark, args.timeout)
                        runs.setdefault((scheduler, containers), []).append(result)
                        print(f"  round {n + 1}: {scheduler:5} {containers} container(s): "
                              f"{result['sink_per_s']:>9,.0f} sink tuples/s", flush=True)
        finally:
            spark.stop()
            zookeeper.close()
    by = {key: median_run(rs) for key, rs in runs.items()}
    words = next(iter(by.values()))["words"]
    print(f"\nword count, {args.sentences:,} sentences = {words:,} sink tuples, at-least-once, "
          f"max spout pending {args.max_pending}, split x3 -> count x3; {os.cpu_count()} "
          f"cores; Spark: 2 workers (127.0.0.2, 127.0.0.3) x 2 cores; median of "
          f"{args.rounds} rounds")
    print(f"  {'scheduler':9} {'containers':>10} {'sink tuples/s':>14} {'(min-max)':>18} "
          f"{'crossing/s':>11} {'crossing':>9} {'submit->1st tuple':>18} {'registered':>11}")
    for (scheduler, containers), r in by.items():
        spread = f"{r['sink_min'] / 1000:,.0f}k-{r['sink_max'] / 1000:,.0f}k"
        print(f"  {scheduler:9} {containers:>10} {r['sink_per_s']:>14,.0f} {spread:>18} "
              f"{r['crossing_per_s']:>11,.0f} {r['crossing_share']:>9.0%} "
              f"{r['submit_to_first_tuple_s']:>17.1f}s {r['submit_to_registered_s']:>10.1f}s")
    for n in args.containers:
        print(f"  spark / local, {n} container(s): sink tuples/s "
              f"{by['spark', n]['sink_per_s'] / by['local', n]['sink_per_s']:.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps(
            {f"{s}-{c}": rs for (s, c), rs in runs.items()}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
