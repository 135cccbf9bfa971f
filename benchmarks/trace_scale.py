"""How tracing scales: trace volume, tracing overhead on both systems, analysis time.

    python benchmarks/trace_scale.py [--only volume|overhead|analysis] [--seconds S]
                                     [--rounds R] [--records 1000000,10000000] [--home DIR]
                                     [--json FILE]

- volume: the tracing hook, in this process, fed a word count's messages (a spout task
  and a count task, 100,000 tuples each): trace bytes per record, against the JSON line
  each record would be, and the hook's cost per message.
- overhead: examples/storm_topologies/wordcount with its endless spout, for --seconds
  after a warm-up, untraced and traced by turns (--rounds pairs), on Storm (local mode;
  traced: the tracing proxy around every component) and on the runtime (traced: the hook
  in every task): the count bolt's tuples/s (on Storm from the "counted N words" line it
  logs every 1,000, on the runtime from its execute counts; no result files, so the bolt
  does only its own work), and the median traced/untraced ratio per system (tracing
  costs 1 - ratio of it).
- analysis: a word count's trace set (spout emit and ack, count bolt recv, emit and ack
  per tuple, both systems, every check passing) of each size in --records, written
  straight to trace files, then `analyse` on an embedded local[2] Spark (a session
  warmed on a small set first): seconds, blocks to columns included.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import time
import zlib
from collections import Counter
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORDCOUNT = ROOT / "examples" / "storm_topologies" / "wordcount"
WORDS = ("the quick brown fox jumps over the lazy dog while the dog sleeps and the fox "
         "runs over a hill of the old town under a grey sky").split()


# -- volume -------------------------------------------------------------------------------

def volume(tuples: int = 100_000) -> dict:
    from heronbridge.conformance.trace import schema, tracefile
    from heronbridge.conformance.trace.hook import TraceHook

    with tempfile.TemporaryDirectory(prefix="hb-trace-") as tmp:
        conf = {schema.TRACE_DIR: tmp}
        tasks = {"count_bolt": ["2", "3"], "word_spout": ["1"]}
        context = {"task->component": {t: c for c, ts in tasks.items() for t in ts}}
        spout, bolt = TraceHook(conf), TraceHook(conf)
        spout.down({"conf": {}, "pidDir": tmp, "context": {
            **context, "taskid": 1, "componentid": "word_spout",
            "source->stream->grouping": {}}})
        bolt.down({"conf": {}, "pidDir": tmp, "context": {
            **context, "taskid": 2, "componentid": "count_bolt",
            "source->stream->grouping": {"word_spout": {"default": {}}}}})
        spout.up({"pid": 1})
        bolt.up({"pid": 2})
        began = time.perf_counter()
        for i in range(tuples):
            word = WORDS[i % len(WORDS)]
            spout.down({"command": "next", "id": ""})
            spout.up({"command": "emit", "tuple": [word], "id": i, "need_task_ids": False})
            spout.up({"command": "sync"})
            tup = str(-(i * 7919 % 10**18) - 10**18)  # ids as long as Storm's
            bolt.down({"id": tup, "comp": "word_spout", "stream": "default", "task": 1,
                       "tuple": [word]})
            bolt.up({"command": "emit", "anchors": [tup], "tuple": [word, i // 20 + 1],
                     "need_task_ids": False})
            bolt.up({"command": "ack", "id": tup})
            spout.down({"command": "ack", "id": i})
        spout.close()
        bolt.close()
        took = time.perf_counter() - began
        files = tracefile.files(Path(tmp))
        size = sum(p.stat().st_size for p in files)
        records = [r for p in files for r in tracefile.read(p)]
        lines = sum(len(json.dumps(r, separators=(",", ":"))) + 1 for r in records)
    messages = tuples * 7
    return {"records": len(records), "bytes": size,
            "bytes_per_record": round(size / len(records), 1),
            "json_lines_bytes_per_record": round(lines / len(records), 1),
            "hook_us_per_message": round(took / messages * 1e6, 2),
            "hook_us_per_record": round(took / len(records) * 1e6, 2)}


# -- overhead -----------------------------------------------------------------------------

COUNTED = re.compile(rb"(?:pid:(\d+), name:count_bolt .*)?counted (\d+) words")


class Counted:
    """Tuples Storm's count bolt tasks have counted, from the line each logs every 1,000
    (the example does), which Storm writes to its log as it comes: no result file, so
    the bolt does only its own work."""

    def __init__(self, log: Path) -> None:
        self.logs = [log]
        self.offsets: dict[Path, int] = {}
        self.counted: dict[tuple[Path, bytes], int] = {}

    def poll(self) -> int:
        for path in self.logs:
            try:
                with path.open("rb") as f:
                    f.seek(self.offsets.get(path, 0))
                    data = f.read()
            except OSError:
                continue
            end = data.rfind(b"\n") + 1
            self.offsets[path] = self.offsets.get(path, 0) + end
            for match in COUNTED.finditer(data[:end]):
                key = (path, match.group(1) or b"")
                self.counted[key] = max(self.counted.get(key, 0), int(match.group(2)))
        return sum(self.counted.values())


def rate(counted: Callable[[], int], warm: float, seconds: float,
         alive: Callable[[], object]) -> float:
    deadline = time.monotonic() + 180
    while counted() == 0:  # up: the first thousand
        if time.monotonic() > deadline:
            msg = "the count bolt logged nothing counted within 180 s"
            raise SystemExit(msg)
        alive()
        time.sleep(0.2)
    time.sleep(warm)
    n0, t0 = counted(), time.monotonic()
    time.sleep(seconds)
    alive()
    return (counted() - n0) / (time.monotonic() - t0)


def runtime_rate(traced: bool, base: Path, warm: float, seconds: float,
                 options: dict) -> float:
    from heronbridge.compat.streamparse import load_project
    from heronbridge.conformance.trace import schema
    from heronbridge.conformance.trace.hook import HOOK_PATH
    from heronbridge.runtime.scheduler import Home
    from heronbridge.runtime.scheduler.launch import Launch
    from heronbridge.runtime.telemetry import EXECUTE_COUNT
    from heronbridge.shims.storm import keys

    home = Home(base / "home")
    options = dict(options)
    if traced:
        options.update({keys.HOOK: HOOK_PATH, schema.TRACE_DIR: str(base / "traces"),
                        schema.SEED: 0})
    project = load_project(WORDCOUNT, None, None, options, False,
                           home.workdir("wordcount") / "resources")
    launch = Launch(project.plan, home, install=project.install_resources)
    launch.start(timeout=120)
    def counted() -> int:  # the runtime's own count of the bolt's executes
        return int(launch.metrics().get("count_bolt", {}).get(EXECUTE_COUNT, 0))

    try:
        return rate(counted, warm, seconds, launch.check)
    finally:
        launch.stop()


def storm_rate(traced: bool, base: Path, warm: float, seconds: float, home: Path,
               options: dict) -> float:
    from heronbridge.compat.streamparse import load_project
    from heronbridge.conformance.scenario import Scenario
    from heronbridge.conformance.storm import fetch
    from heronbridge.conformance.storm.flux import flux_topology, write_flux
    from heronbridge.conformance.storm.local_storm import LocalStorm, storm_command
    from heronbridge.conformance.storm.resources_jar import build_resources_jar

    base.mkdir(parents=True, exist_ok=True)
    scenario = Scenario(name="trace-overhead", project=WORDCOUNT, tuples=None,
                        options=options)
    project = load_project(WORDCOUNT, None, None, scenario.storm_options(), False,
                           base / "resources")
    install = fetch(home)
    flux = flux_topology(project, scenario, base / "traces", trace=traced)
    jar = build_resources_jar(project.source, {}, base / "topology-resources.jar")
    (base / "tmp").mkdir(exist_ok=True)
    command = storm_command(install.java, install.classpath, jar,
                            write_flux(flux, base / "topology.yaml"), 3600, base / "tmp")
    env = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent),
                                                   os.environ.get("PATH", "")])}
    storm = LocalStorm(command, base / "java.log", env, base)
    storm.start()

    def alive() -> None:
        if storm.exit_code() is not None:
            msg = f"Storm's JVM exited (log: {base / 'java.log'})"
            raise SystemExit(msg)

    try:
        return rate(Counted(base / "java.log").poll, warm, seconds, alive)
    finally:
        storm.stop()


def overhead(seconds: float, warm: float, home: Path, rounds: int,
             systems: tuple[str, ...] = ("storm", "runtime"), results: bool = False) -> dict:
    """Untraced and traced runs alternate, `rounds` pairs per system: the ratio is the
    median of each pair's, so that a machine busier in one run than the next moves it
    less."""
    found = {}
    with tempfile.TemporaryDirectory(prefix="hb-overhead-") as tmp:
        for system in systems:
            pairs = []
            for n in range(rounds):
                rates = {}
                for traced in (False, True):
                    base = Path(tmp) / f"{system}-{n}-{'traced' if traced else 'plain'}"
                    # Without a result folder the example's bolt logs each count.
                    options = {"example.output.dir": str(base / "out")} if results else {}
                    rates[traced] = (storm_rate(traced, base, warm, seconds, home, options)
                                     if system == "storm" else
                                     runtime_rate(traced, base, warm, seconds, options))
                    shutil.rmtree(base, ignore_errors=True)
                print(f"  {system:8} untraced {rates[False]:9,.0f} tuples/s, traced "
                      f"{rates[True]:9,.0f} tuples/s: {rates[True] / rates[False]:.2f}",
                      flush=True)
                pairs.append((rates[False], rates[True]))
            ratios = sorted(t / u for u, t in pairs)
            found[system] = {"untraced": [round(u) for u, _ in pairs],
                             "traced": [round(t) for _, t in pairs],
                             "ratio": round(ratios[len(ratios) // 2], 3)}
    return found


# -- analysis -----------------------------------------------------------------------------

PLAN = {"topology": "wordcount", "reliable": True, "components": {
    "word_spout": {"kind": "spout", "parallelism": 1, "inputs": [],
                   "streams": {"default": {"fields": ["word"], "direct": False}}},
    "count_bolt": {"kind": "bolt", "parallelism": 2, "inputs": [
        {"source": "word_spout", "stream": "default", "grouping": "fields",
         "fields": ["word"]}],
        "streams": {"default": {"fields": ["word", "count"], "direct": False}}}}}


def write_run(run_dir: Path, records: int) -> None:
    """Both systems' traces of a word count: 5 records per tuple and system."""
    from heronbridge.conformance.trace import schema

    run_dir.mkdir(parents=True)
    (run_dir / "plan.json").write_text(json.dumps(PLAN))
    for system, first in ((schema.STORM, 2), (schema.RUNTIME, 1)):
        folder = run_dir / system / schema.TRACES
        folder.mkdir(parents=True)
        _write_system(folder, system, first, records // 10)


def _write_system(folder: Path, system: str, first: int, tuples: int) -> None:
    from heronbridge.conformance.trace import schema, tracefile
    from heronbridge.conformance.trace.tracefile import CODE

    emit, recv, ack, spout_ack = (CODE[e] for e in (schema.EMIT, schema.RECV, schema.ACK,
                                                    schema.SPOUT_ACK))
    words = [w.encode() for w in WORDS] + [f"w{i}".encode() for i in range(2000)]
    tasks = {"word_spout": [first], "count_bolt": [first + 1, first + 2]}
    t = 1_700_000_000.0
    files = {task: tracefile.Writer(
        folder / tracefile.file_name(component, task, 100 + task),
        {"component": component, "task": task, "pid": 100 + task, "t": t,
         "spout": component == "word_spout", "tasks": tasks})
        for component, ids in tasks.items() for task in ids}
    rows: dict[int, list] = {task: [] for task in files}
    seqs = dict.fromkeys(files, 0)
    counts: dict[bytes, int] = {}

    totals: dict[int, Counter] = {task: Counter() for task in files}

    def flush(task: int) -> None:
        block = rows[task]
        totals[task].update(tracefile.EVENTS[r[1]] for r in block)
        files[task].block({"n": len(block), "seq": seqs[task], "t1": block[-1][0],
                           "active": block[-1][0], "totals": dict(totals[task])}, block)
        seqs[task] += len(block)
        rows[task] = []

    spout = first
    for i in range(tuples):
        t += 1e-5
        word = words[i % len(words)]
        bolt = first + 1 + zlib.crc32(word) % 2
        counts[word] = n = counts.get(word, 0) + 1
        value = b'["' + word + b'"]'
        msg_id = str(i).encode()
        tup = f"{system}{i}"
        rows[spout].append([t, emit, msg_id, "default", value, None, None, [], None, [bolt]])
        rows[bolt] += [[t, recv, tup, "default", value, "word_spout", spout],
                       [t, emit, None, "default",
                        b'["' + word + b'",' + str(n).encode() + b"]", None, None, [tup]],
                       [t, ack, tup]]
        rows[spout].append([t, spout_ack, msg_id])
        for task in (spout, bolt):
            if len(rows[task]) >= 4096:
                flush(task)
    for task, writer in files.items():
        if rows[task]:
            flush(task)
        writer.close()


def analysis(sizes: list[int]) -> dict:
    from heronbridge.conformance.analysis import analyse, session
    from heronbridge.conformance.analysis import traces as trace_files
    from heronbridge.conformance.scenario import Scenario

    spark = session("local[2]")
    found = {}
    scenario = Scenario(name="trace-scale", project=WORDCOUNT)
    with tempfile.TemporaryDirectory(prefix="hb-analysis-") as tmp:
        warm = Path(tmp) / "warm"
        write_run(warm, 20_000)
        analyse(warm, scenario, spark=spark)  # a session's first queries load classes
        for size in sizes:
            run_dir = Path(tmp) / str(size)
            began = time.monotonic()
            write_run(run_dir, size)
            wrote = time.monotonic() - began
            trace_bytes = sum(p.stat().st_size for s in ("storm", "runtime")
                              for p in trace_files.files(run_dir, s))
            began = time.monotonic()
            result = analyse(run_dir, scenario, spark=spark)
            took = time.monotonic() - began
            failed = [(v.check, v.subject) for v in result.verdicts if v.verdict == "fail"]
            rows = sum(result.stats[s].tuples for s in result.stats) * 5
            found[size] = {"records": rows, "trace_mb": round(trace_bytes / 1e6, 1),
                           "write_s": round(wrote, 1), "analyse_s": round(took, 1),
                           "failed": failed}
            print(f"  {rows:>12,} records ({trace_bytes / 1e6:,.0f} MB of trace): analysis "
                  f"{took:.1f} s; failing checks: {failed or 'none'}", flush=True)
            shutil.rmtree(run_dir)
    spark.stop()
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=("volume", "overhead", "analysis"))
    parser.add_argument("--seconds", type=float, default=20.0,
                        help="measured seconds per overhead run (after --warmup)")
    parser.add_argument("--warmup", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=3,
                        help="untraced/traced pairs per system (the median ratio counts)")
    parser.add_argument("--results", action="store_true",
                        help="the count bolt writes its result files (example.output.dir); "
                             "without, it logs each count, as under `conform`")
    parser.add_argument("--systems", default="storm,runtime",
                        help="the systems whose tracing overhead is measured")
    parser.add_argument("--records", default="1000000,10000000",
                        help="trace set sizes for the analysis, comma-separated")
    parser.add_argument("--home", default=None, help="where Storm's jars are cached")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()
    results: dict = {"cpus": os.cpu_count(), "load_average": os.getloadavg()[0]}
    if args.only in (None, "volume"):
        results["volume"] = volume()
        v = results["volume"]
        print(f"volume: {v['bytes_per_record']} bytes per record "
              f"(as JSON lines: {v['json_lines_bytes_per_record']}), the hook "
              f"{v['hook_us_per_record']} µs per record in this process", flush=True)
    if args.only in (None, "overhead"):
        print(f"overhead: word count, {args.seconds:g} s after {args.warmup:g} s of warm-up, "
              f"{'result files' if args.results else 'results logged'}")
        from heronbridge.runtime.scheduler import default_home

        home = Path(args.home) if args.home else default_home()
        results["overhead"] = overhead(args.seconds, args.warmup, home, args.rounds,
                                       tuple(args.systems.split(",")), args.results)
        for system, r in results["overhead"].items():
            print(f"  {system}: traced/untraced, median of the pairs, {r['ratio']:.2f} "
                  f"(tracing costs "
                  f"{(1 - r['ratio']) * 100:.0f}% of throughput)")
    if args.only in (None, "analysis"):
        print("analysis: embedded Spark, local[2]")
        results["analysis"] = analysis([int(n) for n in args.records.split(",")])
    results["load_average_after"] = os.getloadavg()[0]
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
