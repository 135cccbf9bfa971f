"""Kafka -> word count -> Kafka: the runtime with heronbridge.kafka's Python spout against
Storm 2.8.3 in local mode with storm-kafka-client's KafkaSpout, both acking, in one run.

    python benchmarks/kafka_wordcount.py [--runs 3] [--rate 200] [--fixed-secs 20]
                                         [--burst 200000] [--burst-secs 30] [--json FILE]
                                         [--systems storm,runtime] [--max-pending 1000]

One KRaft broker (heronbridge.jvm.kafka). Each run starts each system on fresh topics (lines:
4 partitions, counts: 1) with examples/storm_topologies/kafka_wordcount: its Python
split, count and sink (heronbridge.kafka's KafkaBolt, acking on delivery reports) on both
systems (Storm runs them as multilang subprocesses, the runtime in-process); the spout is
the example's KafkaSpout on the runtime and storm-kafka-client's KafkaSpout on Storm (the
same tuple), both at parallelism 2, committing offsets every second.

1. Fixed load: `rate` lines a second for `fixed-secs`, each line four words and a probe
   word of its own; a probe's latency is its count record's timestamp minus its line's
   (Kafka's CreateTime, one clock): p50 and p99.
2. Burst: `burst` lines at once. Throughput: counts written a second (read from the
   count topic's end offset) from 3 s after the burst for as long as a tenth of the
   burst's lines is still to be read (the spout saturated); the spout's lag (end offsets
   minus its group's committed offsets) 5, 10 and 20 s after the burst, and when it
   fell to 0, if it did within `burst-secs`.

Prints each run and the medians; the ratio runtime/Storm of throughput is the bar (10x).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from measure import warn_if_tasks_run_another_heronbridge

from heronbridge.compat.streamparse import load_project, topology_name

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "storm_topologies" / \
    "kafka_wordcount"
PARTITIONS = 4
WORDS = ("ember maple brook cedar river lumen stone grove north harbor quill amber drift "
         "fable glade hollow ivory jasper kestrel lattice meadow nimbus opal prairie").split()
MAX_PENDING = 1000  # topology.max.spout.pending on both, as `heronbridge bench` sets it
LAG_AT = (5.0, 10.0, 20.0)
THROUGHPUT_FROM = 3.0
SATURATED_BACKLOG = 0.1  # of the burst's lines, still to read: the spout is saturated


def probe_word(n: int) -> str:
    """A word of letters only (the split keeps [a-z]+), unique to line `n`."""
    out = ""
    while True:
        n, digit = divmod(n, 26)
        out = chr(97 + digit) + out
        if n == 0:
            return "zq" + out


def line(n: int, probe: bool) -> str:
    words = [WORDS[(n * 7 + i * 3) % len(WORDS)] for i in range(4)]
    return " ".join([*words, probe_word(n)] if probe else words)


class Sink:
    """Reads the count topic from the start in a thread: each probe's count record's
    timestamp."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.probes: dict[str, int] = {}
        self.stop = threading.Event()
        self.consumer = Consumer({"bootstrap.servers": bootstrap,
                                  "group.id": f"bench-{uuid.uuid4().hex[:8]}",
                                  "enable.auto.commit": False,
                                  "auto.offset.reset": "earliest"})
        self.consumer.assign([TopicPartition(topic, 0, 0)])
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.is_set():
            for m in self.consumer.consume(10_000, 0.2):
                if m.error() is not None:
                    continue
                key = m.key()
                if key is not None and key.startswith(b"zq"):
                    self.probes.setdefault(key.decode(), m.timestamp()[1])
        self.consumer.close()

    def close(self) -> None:
        self.stop.set()
        self.thread.join(10)


class Kafka:
    def __init__(self, bootstrap: str) -> None:
        self.bootstrap = bootstrap
        self.admin = AdminClient({"bootstrap.servers": bootstrap})
        self.producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 1,
                                  "acks": "all", "enable.idempotence": True,
                                  "queue.buffering.max.messages": 1_000_000})
        self.ends = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench-ends"})
        self.groups: dict[str, Any] = {}

    def written(self, topic: str) -> int:
        """Records in partition 0 of `topic` (its end offset)."""
        return self.ends.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)[1]

    def close(self) -> None:
        for c in [self.ends, *self.groups.values()]:
            c.close()

    def topics(self, tag: str) -> tuple[str, str]:
        lines, counts = f"lines-{tag}", f"counts-{tag}"
        for future in self.admin.create_topics([NewTopic(lines, PARTITIONS, 1),
                                                NewTopic(counts, 1, 1)]).values():
            future.result(60)
        return lines, counts

    def send(self, topic: str, value: str, n: int, timestamp: int | None = None) -> None:
        while True:
            try:
                self.producer.produce(topic, value.encode(), partition=n % PARTITIONS,
                                      timestamp=timestamp or 0)
                return
            except BufferError:
                self.producer.poll(0.01)

    def lag(self, topic: str, group: str) -> int | None:
        c = self.groups.get(group)
        if c is None:  # one client per group, kept: a new one each time costs the broker
            c = self.groups[group] = Consumer({"bootstrap.servers": self.bootstrap,
                                               "group.id": group})
        committed = c.committed([TopicPartition(topic, p) for p in range(PARTITIONS)],
                                timeout=10)
        total = 0
        for tp in committed:
            end = self.ends.get_watermark_offsets(TopicPartition(topic, tp.partition),
                                                  timeout=10)[1]
            total += end - max(tp.offset, 0)
        return total


# -- the two systems ------------------------------------------------------------------------

def options(bootstrap: str, lines: str, counts: str, max_pending: int) -> dict[str, Any]:
    """0 max_pending: none (the runtime's latency-led window; Storm: no limit)."""
    pending = {"topology.max.spout.pending": max_pending} if max_pending else {}
    return {"kafka.bootstrap.servers": bootstrap, "kafka.spout.topics": lines,
            "kafka.bolt.topic": counts, "topology.message.timeout.secs": 30, **pending}


class Runtime:
    name = "runtime"

    def __init__(self, out: Path, bootstrap: str, lines: str, counts: str,
                 max_pending: int) -> None:
        from heronbridge.runtime.scheduler import Home
        from heronbridge.runtime.scheduler.launch import Launch

        home = Home(out / "home")
        name = topology_name(EXAMPLE, None)
        project = load_project(EXAMPLE, name, None,
                               options(bootstrap, lines, counts, max_pending), False,
                               home.workdir(name) / "resources")
        self.group = f"{name}-lines"
        self.launch = Launch(project.plan, home, install=project.install_resources)

    def start(self) -> None:
        self.launch.start(timeout=180)

    def stop(self) -> None:
        self.launch.stop()


class Storm:
    name = "storm"

    def __init__(self, out: Path, bootstrap: str, lines: str, counts: str,
                 home: Path | None, max_pending: int) -> None:
        from heronbridge.conformance.kafka import storm_kafka
        from heronbridge.conformance.scenario import Scenario
        from heronbridge.conformance.storm import fetch
        from heronbridge.conformance.storm.flux import flux_topology, write_flux
        from heronbridge.conformance.storm.local_storm import LocalStorm, storm_command
        from heronbridge.conformance.storm.resources_jar import build_resources_jar

        out.mkdir(parents=True, exist_ok=True)
        name = topology_name(EXAMPLE, None)
        project = load_project(EXAMPLE, name, None,
                               options(bootstrap, lines, counts, max_pending), False,
                               out / "resources")
        install = fetch(home)
        flux = flux_topology(project, Scenario(name=f"bench-{name}", project=EXAMPLE),
                             out / "traces", trace=False)
        self.group = f"{name}-storm-lines"
        spout = project.plan.components["lines"]
        storm_kafka.kafka_spout(flux, "lines", bootstrap, [lines], self.group,
                                spout.parallelism)
        jar = build_resources_jar(project.source, {}, out / "topology-resources.jar")
        tmp = out / "tmp"
        tmp.mkdir(exist_ok=True)
        command = storm_command(install.java, [*install.classpath, *storm_kafka.jars(home)],
                                jar, write_flux(flux, out / "topology.yaml"), 3600, tmp)
        env = dict(os.environ)
        env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
        self.log = out / "java.log"
        self.storm = LocalStorm(command, self.log, env, out)

    def start(self) -> None:
        self.storm.start()

    def stop(self) -> None:
        self.storm.stop()


# -- one run of one system ----------------------------------------------------------------

def measure(system: Any, kafka: Kafka, lines: str, counts: str, args: argparse.Namespace,
            say: Any) -> dict[str, Any]:
    sink = Sink(kafka.bootstrap, counts)
    check = getattr(system, "storm", None)
    try:
        system.start()
        # Up when a first probe comes through (Storm's local mode takes its time).
        sent: dict[str, int] = {}
        n = 0
        deadline = time.monotonic() + 300
        while not sink.probes:
            if time.monotonic() > deadline or (check is not None and check.exit_code()
                                               is not None):
                log = getattr(system, "log", None)
                tail = "\n".join(log.read_text(errors="replace").splitlines()[-40:]) \
                    if log is not None and log.is_file() else "(see its logs)"
                msg = f"{system.name}: no count came out:\n{tail}"
                raise RuntimeError(msg)
            now_ms = int(time.time() * 1000)
            kafka.send(lines, line(n, True), n, now_ms)
            sent[probe_word(n)] = now_ms
            n += 1
            kafka.producer.poll(0)
            time.sleep(0.5)
        say(f"{system.name}: up; fixed load {args.rate:g} lines/s for {args.fixed_secs:g} s")
        first_fixed = n
        began = time.monotonic()
        interval = 0.01
        while time.monotonic() - began < args.fixed_secs:
            due = int((time.monotonic() - began) * args.rate) + first_fixed
            now_ms = int(time.time() * 1000)
            while n < due:
                kafka.send(lines, line(n, True), n, now_ms)
                sent[probe_word(n)] = now_ms
                n += 1
            kafka.producer.poll(0)
            time.sleep(interval)
        kafka.producer.flush(30)
        time.sleep(3.0)  # the last probes' counts
        fixed = [sink.probes[p] - sent[p] for p in map(probe_word, range(first_fixed, n))
                 if p in sink.probes]
        fixed.sort()
        missing = (n - first_fixed) - len(fixed)
        # Counted from here by the count topic's end offset: reading every record would
        # take CPU from the system measured, and more the faster it is.
        sink.close()
        say(f"{system.name}: burst of {args.burst:,} lines")
        for i in range(args.burst):
            kafka.send(lines, line(n + i, False), n + i)
        kafka.producer.flush(60)
        burst_at = time.monotonic()
        lags: dict[str, int | None] = {}
        drained = None
        marks: list[tuple[float, int, int | None]] = []
        while time.monotonic() - burst_at < args.burst_secs:
            t = time.monotonic() - burst_at
            written = kafka.written(counts)
            lag = kafka.lag(lines, system.group)
            marks.append((t, written, lag))
            for at in LAG_AT:
                if t >= at and f"{at:g}s" not in lags:
                    lags[f"{at:g}s"] = lag
            if lag == 0 and drained is None:
                drained = t
                break
            time.sleep(0.5)
        # While saturated: from THROUGHPUT_FROM on, while the spout's backlog lasts (not
        # the drain at its end, where the rate falls as the last lines go through).
        backlog = SATURATED_BACKLOG * args.burst
        window = [(t, c) for t, c, lag in marks
                  if t >= THROUGHPUT_FROM and lag is not None and lag >= backlog]
        rate = (window[-1][1] - window[0][1]) / (window[-1][0] - window[0][0]) \
            if len(window) >= 2 and window[-1][0] > window[0][0] else None
        return {"fixed": {"offered_lines_per_s": args.rate, "probes": len(fixed),
                          "missing": missing,
                          "p50_ms": fixed[len(fixed) // 2] if fixed else None,
                          "p99_ms": fixed[min(len(fixed) - 1, int(len(fixed) * 0.99))]
                          if fixed else None},
                "burst": {"lines": args.burst, "counts_per_s": rate, "lag": lags,
                          "drained_s": drained}}
    finally:
        system.stop()
        sink.close()


def median(values: list) -> float | None:
    found = [v for v in values if v is not None]
    return statistics.median(found) if found else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--rate", type=float, default=200.0, help="fixed load, lines/s")
    parser.add_argument("--fixed-secs", type=float, default=20.0)
    parser.add_argument("--burst", type=int, default=200_000, help="lines")
    parser.add_argument("--burst-secs", type=float, default=30.0)
    parser.add_argument("--systems", default="storm,runtime")
    parser.add_argument("--home", type=Path, default=None,
                        help="where Storm's and Kafka's jars are cached (default: the "
                             "heronbridge home)")
    parser.add_argument("--max-pending", type=int, default=MAX_PENDING,
                        help="topology.max.spout.pending on both (0: none)")
    parser.add_argument("--json", help="write every result here")
    args = parser.parse_args()
    from heronbridge.jvm.kafka import KafkaCluster

    def say(text: str) -> None:
        print(f"  .. {text}", file=sys.stderr, flush=True)

    warn_if_tasks_run_another_heronbridge()

    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="hb-kafka-bench-") as tmp:
        cluster = KafkaCluster(Path(tmp) / "kafka", home=args.home)
        with cluster:
            kafka = Kafka(cluster.bootstrap_servers)
            for run in range(1, args.runs + 1):
                row: dict[str, Any] = {"run": run}
                for name in args.systems.split(","):
                    tag = f"{name}-{run}-{uuid.uuid4().hex[:6]}"
                    lines, counts = kafka.topics(tag)
                    out = Path(tmp) / tag
                    system = Runtime(out, kafka.bootstrap, lines, counts, args.max_pending) \
                        if name == "runtime" else Storm(out, kafka.bootstrap, lines, counts,
                                                        args.home, args.max_pending)
                    row[name] = measure(system, kafka, lines, counts, args, say)
                    r = row[name]
                    print(f"run {run} {name:8} throughput {r['burst']['counts_per_s'] or 0:>9,.0f}"
                          f" counts/s | at {args.rate:g} lines/s p50 "
                          f"{r['fixed']['p50_ms']} ms p99 {r['fixed']['p99_ms']} ms "
                          f"({r['fixed']['missing']} probes missing) | lag after "
                          f"{args.burst:,}: {r['burst']['lag']}, drained in "
                          f"{r['burst']['drained_s']} s", flush=True)
                if row.get("storm") and row.get("runtime") and \
                        row["storm"]["burst"]["counts_per_s"] and \
                        row["runtime"]["burst"]["counts_per_s"]:
                    row["ratio"] = row["runtime"]["burst"]["counts_per_s"] / \
                        row["storm"]["burst"]["counts_per_s"]
                    print(f"run {run} throughput runtime/Storm {row['ratio']:.2f}x", flush=True)
                results.append(row)
            kafka.close()
    summary: dict[str, Any] = {}
    for name in args.systems.split(","):
        summary[name] = {
            "counts_per_s": median([r[name]["burst"]["counts_per_s"] for r in results]),
            "p99_ms": median([r[name]["fixed"]["p99_ms"] for r in results]),
            "p50_ms": median([r[name]["fixed"]["p50_ms"] for r in results]),
            "lag_10s": median([r[name]["burst"]["lag"].get("10s") for r in results]),
            "drained_s": median([r[name]["burst"]["drained_s"] for r in results])}
    ratios = [r["ratio"] for r in results if "ratio" in r]
    if ratios:  # the bar: the median of the runs' ratios, each measured within one run
        summary["throughput_ratios"] = [round(r, 2) for r in ratios]
        summary["throughput_runtime_over_storm"] = median(ratios)
    print("median of", args.runs, "runs:", json.dumps(summary, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps({"runs": results, "median": summary},
                                              indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
