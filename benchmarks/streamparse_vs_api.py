"""CPU per tuple: the example streamparse word count on the lean host vs. the same logic
written against the runtime's API, both on the in-memory topology, in one run.

    python benchmarks/streamparse_vs_api.py [--calls N] [--rounds R]

examples/storm_topologies/wordcount, unchanged (a word spout, two count bolts behind a
fields grouping, at-least-once), runs on runtime/testing.py's InMemoryTopology: every
task's real collector, decoders and XOR tracking in this process, no sockets. The same
spout and bolt logic (the words of data/words.txt line by line with msg ids; count,
write the JSON line, emit [word, count] anchored, ack) written for the runtime's API runs
the same way. Rounds interleave the two; the medians of CPU microseconds per sink tuple
and their ratio are printed (the issue's bar: streamparse <= 2x the API).
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from heronbridge.runtime import Grouping, TopologyBuilder
from heronbridge.runtime.api import Bolt, Spout
from heronbridge.runtime.testing import InMemoryTopology, sink_counts

PROJECT = Path(__file__).resolve().parent.parent / "examples" / "storm_topologies" / "wordcount"
WORDS = PROJECT / "src" / "data" / "words.txt"
log = logging.getLogger("wordcount")


class WordSpout(Spout):
    outputs = ["word"]

    def open(self, config, context, collector):
        import re

        pattern = re.compile(r"[a-z]+")
        with WORDS.open(encoding="utf-8") as text:
            self.lines = [pattern.findall(line.lower()) for line in text]
        self.line_no = 0
        self.emitted = 0
        self.emit = collector.emit

    def next_tuple(self):
        for word in self.lines[self.line_no]:
            self.emit([word], msg_id=self.emitted)
            self.emitted += 1
        self.line_no += 1
        if self.line_no == len(self.lines):
            self.line_no = 0


class WordCountBolt(Bolt):
    outputs = ["word", "count"]

    def prepare(self, config, context, collector):
        self.counter = Counter()
        self.total = 0
        self.collector = collector
        out = config["example.output.dir"]
        os.makedirs(out, exist_ok=True)
        path = os.path.join(out, f"api-count-{context.task_id}.jsonl")
        self.file = open(path, "a", buffering=1, encoding="utf-8")  # noqa: SIM115

    def execute(self, tup):
        word = tup.values[0]
        self.counter[word] += 1
        self.total += 1
        count = self.counter[word]
        self.file.write(json.dumps({"word": word, "count": count}) + "\n")
        self.collector.emit([word, count], anchors=tup)
        self.collector.ack(tup)
        if self.total % 1000 == 0:
            log.info("counted %d words", self.total)


def api_plan(out: Path):
    builder = TopologyBuilder("wordcount-api", {"topology.reliability.mode": "ATLEAST_ONCE",
                                                "example.output.dir": str(out)})
    spout = builder.spout("word_spout", WordSpout)
    builder.bolt("count_bolt", WordCountBolt, inputs={spout: Grouping.by_fields("word")}, par=2)
    return builder.build()


def streamparse_plan(tmp: Path):
    from heronbridge.compat.streamparse import load_project

    resources = tmp / "resources"
    if not resources.exists():
        shutil.copytree(PROJECT / "src", resources)
    options = {"wordcount.rounds": 10**9, "example.output.dir": str(tmp / "out")}
    return load_project(PROJECT, None, None, options, False, resources).plan


def measure(plan, calls: int) -> float:
    """CPU microseconds per sink tuple over `calls` spout calls, after a warm-up."""
    topo = InMemoryTopology(plan)
    topo.run(200, batch=50)
    before = sink_counts(topo)["count_bolt"]
    cpu = time.process_time()
    topo.run(calls, batch=50)
    cpu = time.process_time() - cpu
    return cpu / (sink_counts(topo)["count_bolt"] - before) * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20_000, help="spout calls per round")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    gc.freeze()
    results: dict[str, list[float]] = {"streamparse": [], "api": []}
    with tempfile.TemporaryDirectory(prefix="hb-sp-api-") as tmp:
        cwd = os.getcwd()
        for _ in range(args.rounds):
            results["api"].append(measure(api_plan(Path(tmp) / "api-out"), args.calls))
            results["streamparse"].append(measure(streamparse_plan(Path(tmp)), args.calls))
            os.chdir(cwd)
            logging.getLogger().handlers[1:] = []  # pystorm's handler of the last round
    median = {k: sorted(v)[len(v) // 2] for k, v in results.items()}
    ratios = sorted(s / a for s, a in zip(results["streamparse"], results["api"], strict=True))
    print(f"word count, at-least-once, 1 spout + 2 count tasks in one process, "
          f"{args.calls:,} spout calls a round, {args.rounds} interleaved rounds")
    for name in ("streamparse", "api"):
        runs = ", ".join(f"{v:.2f}" for v in results[name])
        print(f"  {name:<12} CPU us per sink tuple: {median[name]:.2f} (runs {runs})")
    print(f"  streamparse / api: {ratios[len(ratios) // 2]:.2f} (median of per-round ratios)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
