"""The heronpy host's per-tuple cost against the runtime's own API, on the same word count.

    python benchmarks/heronpy_host.py [--sentences N] [--rounds R] [--at-most-once]
    python benchmarks/heronpy_host.py --end-to-end [--sentences N] [--rounds R]

Both word counts (examples/runtime/wordcount.py and examples/heronpy/wordcount.py: the
same spout, split and count logic, one written against the runtime's Spout/Bolt, the
other against heronpy's) run in one process on the runtime's real collectors and receive
path, as benchmarks/hot_path.py drives them: no sockets, no stream manager, the same
serializer (msgpack). Rounds alternate between the two so that the host's noise hits
both alike; each stage keeps its fastest round. Prints ns per word by stage and the
heronpy/runtime ratio measured in this run.

`--end-to-end` runs both as real topologies instead (a process per task, a stream manager,
at-least-once acking), one after the other in each round, and compares the count bolt's
steady rate (between 10% and 90% of the words, from its own metrics samples).
"""

from __future__ import annotations

import argparse
import gc
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from hot_path import feed, hosted, receiver  # noqa: E402  (it imports examples/runtime/wordcount.py)
from measure import steady_rate  # noqa: E402

# Both examples are wordcount.py: in this process the heronpy one takes the name, as its
# hosts import it by its class names (wordcount.SentenceSpout); tasks have one each.
_runtime_example = sys.modules.pop("wordcount")
SENTENCES = _runtime_example.SENTENCES
SentenceSpout = _runtime_example.SentenceSpout
SplitBolt = _runtime_example.SplitBolt
CountBolt = _runtime_example.CountBolt
sys.path.insert(0, str(ROOT / "examples" / "heronpy"))

from heronbridge.compat.heronpy.loader import load_file  # noqa: E402
from heronbridge.runtime import Grouping, TopologyBuilder  # noqa: E402
from heronbridge.runtime.api.context import TopologyContext  # noqa: E402
from heronbridge.runtime.instance.emitter import BoltEmitter, SpoutEmitter  # noqa: E402
from heronbridge.runtime.instance.spout_step import SpoutStep  # noqa: E402
from heronbridge.runtime.plan.tasks import TaskLayout  # noqa: E402
from heronbridge.runtime.wire import frames  # noqa: E402
from heronbridge.runtime.wire.serde import make_serializer  # noqa: E402
from heronbridge.shims.heronpy.host import HeronpyBolt, HeronpySpout  # noqa: E402

HERONPY_WORDCOUNT = ROOT / "examples" / "heronpy" / "wordcount.py"
STAGES = ("spout", "split", "count")
METRICS_INTERVAL = 0.2
COMPONENTS = ("sentences", "split", "count")


def runtime_plan(mode: str):
    builder = TopologyBuilder("hb-wordcount", {"topology.reliability.mode": mode})
    spout = builder.spout("sentences", SentenceSpout)
    split = builder.bolt("split", SplitBolt, inputs=[spout])
    builder.bolt("count", CountBolt, inputs={split: Grouping.by_fields("word")})
    return builder.build(), {"sentences": SentenceSpout, "split": SplitBolt,
                             "count": CountBolt}


def heronpy_plan(mode: str):
    options = {"topology.reliability.mode": mode, "heronbridge.serializer": "msgpack"}
    plan = load_file(HERONPY_WORDCOUNT, options=options)
    for spec in plan.components.values():
        spec.parallelism = 1
        spec.config.pop("topology.tick.tuple.freq.secs", None)
    return plan, {"sentences": HeronpySpout, "split": HeronpyBolt, "count": HeronpyBolt}


def build(plan, classes, acking: bool):
    """Each component opened or prepared on its real collector, as its task would."""
    ser = make_serializer("msgpack")
    out = {}
    for name, task in ((n, TaskLayout.of(plan).component_tasks[n][0]) for n in COMPONENTS):
        kind = SpoutEmitter if name == "sentences" else BoltEmitter
        emitter = kind(plan, task, ser, acking, frozenset(), seed=task)
        context = TopologyContext.build(plan, "bench-id", task)
        user = classes[name]()
        config = plan.component_config(name)
        user.config, user.context, user.collector = config, context, emitter
        if name == "sentences":
            user.open(config, context, emitter)
        else:
            user.prepare(config, context, emitter)
        out[name] = (task, user, emitter)
    return out


def run_once(kind: str, sentences: int, batch: int, acking: bool) -> tuple[int, dict]:
    mode = "ATLEAST_ONCE" if acking else "ATMOST_ONCE"
    plan, classes = (runtime_plan if kind == "runtime" else heronpy_plan)(mode)
    parts = build(plan, classes, acking)
    spout_task, spout, spout_em = parts["sentences"]
    spout_step = SpoutStep(hosted(plan, spout_task, spout, spout_em), time.perf_counter)
    split_task, split, split_em = parts["split"]
    count_task, count, count_em = parts["count"]
    split_rx = receiver(plan, split_task, split, split_em)
    count_rx = receiver(plan, count_task, count, count_em)

    def sentences_stage(_: list) -> list[bytes]:
        spout_em.now = time.perf_counter()
        next_tuple = spout.next_tuple
        for _ in range(batch):
            next_tuple()
        spout_step.ack_emitted()  # at most once: acked at once, as the step does
        return spout_em.flush()

    def split_stage(received: list[bytes]) -> list[bytes]:
        feed(split_rx, received)
        return split_em.flush()

    def count_stage(received: list[bytes]) -> list[bytes]:
        feed(count_rx, [f for f in received if frames.HEADER.unpack_from(f)[2] == count_task])
        return count_em.flush()

    steps = list(zip(STAGES, (sentences_stage, split_stage, count_stage), strict=True))
    stage = dict.fromkeys(STAGES, 0.0)
    clock = time.perf_counter
    for _ in range(sentences // batch):
        out: list = []
        for name, step in steps:
            began = clock()
            out = step(out)
            stage[name] += clock() - began
    return count_rx.counts["execute-count"], stage


def end_to_end(kind: str, sentences: int, max_pending: int) -> float:
    """The count bolt's steady rate (words/s) with the topology running for real."""
    from heronbridge.runtime import control
    from heronbridge.runtime.scheduler import Home
    from heronbridge.runtime.scheduler.launch import Launch

    plan = (runtime_plan if kind == "runtime" else heronpy_plan)("ATLEAST_ONCE")[0]
    plan.python_path.append(str(ROOT / "examples" / kind))
    plan.config.update({"topology.max.spout.pending": max_pending, "wordcount.sentences":
                        sentences, "heronbridge.serializer": "msgpack",
                        "heronbridge.metrics.interval.secs": METRICS_INTERVAL})
    words = sum(len(SENTENCES[i % len(SENTENCES)].split()) for i in range(sentences))
    samples: dict[float, float] = {}
    with tempfile.TemporaryDirectory(prefix="hb-bench-") as tmp:
        with Launch(plan, Home(Path(tmp) / "home")) as launch:
            deadline = time.monotonic() + 300
            while not samples or max(samples.values()) < words:
                if time.monotonic() > deadline:
                    msg = f"{kind}: the count bolt did not see {words} words in 300 s"
                    raise SystemExit(msg)
                time.sleep(METRICS_INTERVAL / 4)
                for task in control.metrics(launch.statemgr, plan.name).tasks:
                    if task.component == "count":
                        samples[task.timestamp_ms / 1000] = task.counters["execute-count"]
    return steady_rate(samples, words)


def main_end_to_end(args: argparse.Namespace) -> int:
    rates: dict[str, list[float]] = {"runtime": [], "heronpy": []}
    for _ in range(args.rounds):
        for kind, found in rates.items():
            found.append(end_to_end(kind, args.sentences, args.max_pending))
    print(f"word count end to end, {args.sentences:,} sentences, at least once, max spout "
          f"pending {args.max_pending}; count bolt words/s in {args.rounds} alternating rounds:")
    for kind, found in rates.items():
        print(f"  {kind:8s} " + "  ".join(f"{r:9,.0f}" for r in found))
    ratios = sorted(h / r for h, r in zip(rates["heronpy"], rates["runtime"], strict=True))
    print(f"  heronpy / runtime, median of the rounds' ratios: {ratios[len(ratios) // 2]:.2f}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int,
                        help="per round (default 50,000; 150,000 with --end-to-end)")
    parser.add_argument("--batch", type=int, default=500, help="sentences per flush")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of each, alternating")
    parser.add_argument("--at-most-once", action="store_true", help="no acking")
    parser.add_argument("--end-to-end", action="store_true", help="real topologies")
    parser.add_argument("--max-pending", type=int, default=5000, help="with --end-to-end")
    args = parser.parse_args()
    if args.end_to_end:
        args.sentences = args.sentences or 150_000
        return main_end_to_end(args)
    args.sentences = args.sentences or 50_000
    gc.freeze()
    gc.set_threshold(100_000, 50, 100)
    best = {kind: {} for kind in ("runtime", "heronpy")}
    words = 0
    for _ in range(args.rounds):
        for kind, table in best.items():
            words, stage = run_once(kind, args.sentences, args.batch, not args.at_most_once)
            for name, seconds in stage.items():
                ns = seconds / words * 1e9
                table[name] = min(table.get(name, ns), ns)
    mode = "at most once" if args.at_most_once else "at least once"
    print(f"{words:,} words per round, {mode}, best of {args.rounds} alternating rounds; "
          "ns per word by stage:")
    print(f"  {'stage':7s} {'runtime':>9s} {'heronpy':>9s} {'ratio':>7s}")
    for name in (*STAGES, "total"):
        rt_ns = sum(best["runtime"].values()) if name == "total" else best["runtime"][name]
        hp_ns = sum(best["heronpy"].values()) if name == "total" else best["heronpy"][name]
        print(f"  {name:7s} {rt_ns:9.1f} {hp_ns:9.1f} {hp_ns / rt_ns:7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
