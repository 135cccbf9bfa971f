"""Java components side by side with Storm, in one run: the mixed topology (Java spout →
Python bolt → Java bolt → Python sink) and a Java-only word count, both with acking.

    python benchmarks/java_components.py [--runs 3] [--seconds S] [--warmup S] [--json FILE]
        [--workload mixed|java-only ...] [--saturated-only]

Each workload is examples/storm_topologies/javamix (its Java code compiled here), on
Storm 2.8.3 in local mode (Flux, one worker, the Python bolts as multilang subprocesses)
and on the runtime (each Java task one JVM, the Python ones in-process). The spout,
`javamix.SentenceSpout`, counts its own acks and times each id from emit to ack, the
same code on both systems. Per run: throughput at saturation (acks/s after the warmup,
`topology.max.spout.pending` 1000), then p99 complete latency at a fixed offered load
(half of Storm's saturated rate; the median of the per-second p99s), and memory: the RSS
of each JVM task of the runtime, and of Storm's one JVM (with its Python subprocesses).
What bounds each: the cores each kind of process used over the measured seconds (the
runtime's JVM tasks, Python tasks, stream managers and the rest; Storm's JVM and its
multilang subprocesses). Prints each run and the median of the runs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import psutil
import yaml
from measure import warn_if_tasks_run_another_heronbridge

from heronbridge.compat.streamparse import load_project
from heronbridge.conformance.storm import fetch
from heronbridge.conformance.storm.flux import RUN_OPTIONS, STREAMPARSE_RUN
from heronbridge.conformance.storm.local_storm import LocalStorm, storm_command
from heronbridge.conformance.storm.resources_jar import build_resources_jar
from heronbridge.jvm.storm import give_classpath
from heronbridge.runtime.scheduler import Home
from heronbridge.runtime.scheduler.jvm import MAIN, is_java
from heronbridge.runtime.scheduler.launch import Launch

JAVAMIX = Path(__file__).resolve().parent.parent / "examples" / "storm_topologies" / "javamix"
WORKLOADS = {"mixed": "javamix", "java-only": "javawordcount"}
PENDING = 1000
MIB = 1 << 20


def compile_jars(storm, out: Path) -> Path:
    classes, jars = out / "classes", out / "jars"
    jars.mkdir(parents=True)
    javac = storm.java.resolve().parent / "javac"
    subprocess.run([str(javac), "--release", "17", "-nowarn", "-d", str(classes), "-cp",
                    os.pathsep.join(map(str, storm.classpath)),
                    *map(str, sorted((JAVAMIX / "src" / "jvm").rglob("*.java")))], check=True)
    with zipfile.ZipFile(jars / "javamix.jar", "w") as z:
        for path in sorted(classes.rglob("*.class")):
            z.write(path, path.relative_to(classes).as_posix())
    return jars


def stats(folder: Path) -> list[dict]:
    lines = []
    for path in folder.glob("spout-*.jsonl"):
        for line in path.read_text().splitlines():
            try:
                lines.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return sorted(lines, key=lambda r: r["t"])


def measured(folder: Path, since_ms: float) -> tuple[float, float | None]:
    """(acks/s, median of per-second p99 ms) over the lines after `since_ms`."""
    lines = [r for r in stats(folder) if r["t"] >= since_ms]
    if len(lines) < 2:
        msg = f"too few spout samples in {folder}: {lines}"
        raise SystemExit(msg)
    rate = (lines[-1]["acked"] - lines[0]["acked"]) / ((lines[-1]["t"] - lines[0]["t"]) / 1000)
    p99s = [r["p99_ms"] for r in lines if r["p99_ms"] >= 0]
    return rate, statistics.median(p99s) if p99s else None


def started(folder: Path, alive, timeout: float = 180.0) -> None:
    """Wait for the spout's first sample: the measured seconds start with the topology,
    not with the JVM (Storm's local mode takes a while to start on a loaded machine)."""
    deadline = time.monotonic() + timeout
    while not stats(folder):
        alive()
        if time.monotonic() > deadline:
            msg = f"no spout sample in {folder} within {timeout:g}s of the start"
            raise SystemExit(msg)
        time.sleep(0.5)


def tree_rss(proc: psutil.Process) -> float:
    total = 0.0
    for p in [proc, *proc.children(recursive=True)]:
        try:
            total += p.memory_info().rss
        except psutil.Error:
            continue
    return total


def kind_of(proc: psutil.Process) -> str:
    line = " ".join(proc.cmdline())
    if MAIN in line:
        return "jvm tasks"
    if proc.name().startswith("java"):
        return "storm jvm"
    for module, kind in (("runtime.stream_manager", "stream managers"),
                         ("runtime.instance", "python tasks")):
        if module in line:
            return kind
    return "multilang" if STREAMPARSE_RUN in line else "other"


def cpu_by_kind(root: psutil.Process) -> dict[int, tuple[str, float]]:
    found = {}
    for p in root.children(recursive=True):
        try:
            times = p.cpu_times()
            found[p.pid] = (kind_of(p), times.user + times.system)
        except psutil.Error:
            continue
    return found


def cores_used(root: psutil.Process, warmup: float, secs: float) -> dict[str, float]:
    """Sleep the warmup, then the measured seconds: the cores each kind of process used
    over the latter (processes that ended meanwhile are left out)."""
    time.sleep(warmup)
    before, began = cpu_by_kind(root), time.monotonic()
    time.sleep(secs)
    after, wall = cpu_by_kind(root), time.monotonic() - began
    used: dict[str, float] = {}
    for pid, (kind, cpu) in after.items():
        used[kind] = used.get(kind, 0.0) + (cpu - before.get(pid, (kind, 0.0))[1]) / wall
    return {k: round(v, 2) for k, v in sorted(used.items(), key=lambda kv: -kv[1])}


def on_storm(storm, project, jars: Path, options: dict, secs: float, base: Path,
             warmup: float) -> dict:
    stats_dir = Path(options["javamix.stats.dir"])
    flux = project.topology.to_flux_dict(project.name)
    for component in [*flux.get("spouts", []), *flux.get("bolts", [])]:
        if is_java(project.plan, component["id"]):
            # streamparse's Flux text leaves a Java component's parallelism out
            component["parallelism"] = project.plan.components[component["id"]].parallelism
        args = component.get("constructorArgs") or []
        if args and isinstance(args[0], list) and args[0] and args[0][0] == STREAMPARSE_RUN:
            args[0][1] = f"-s json {args[0][1]}"
    flux["config"] = {**project.options, **RUN_OPTIONS, **options}
    base.mkdir(parents=True)
    (base / "tmp").mkdir()
    flux_yaml = base / "topology.yaml"
    flux_yaml.write_text(yaml.safe_dump(flux, sort_keys=False))
    jar = build_resources_jar(project.source, {}, base / "resources.jar")
    command = storm_command(storm.java, [*storm.classpath, *sorted(jars.glob("*.jar"))], jar,
                            flux_yaml, int(secs) + 120, base / "tmp")
    env = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent),
                                                   os.environ.get("PATH", "")])}
    with LocalStorm(command, base / "java.log", env, base) as local:
        started(stats_dir, lambda: local.exit_code() is None or _died(base / "java.log"))
        me = psutil.Process()
        cores = cores_used(me, warmup, secs)
        rss = tree_rss(psutil.Process(local.proc.pid))
    return {"rss_mib": rss / MIB, "cores": cores}


def _died(log: Path) -> bool:
    msg = f"Storm's JVM exited before the topology started; see {log}"
    raise SystemExit(msg)


def on_runtime(project, home: Home, storm_home: Path, secs: float, stats_dir: Path,
               warmup: float) -> dict:
    give_classpath(project.plan, project.java_jars, storm_home)
    with Launch(project.plan, home, install=project.install_resources) as launch:
        started(stats_dir, launch.check)
        me = psutil.Process()
        cores = cores_used(me, warmup, secs)
        jvms = [p for p in me.children(recursive=True) if MAIN in " ".join(p.cmdline())]
        per_jvm = [p.memory_info().rss / MIB for p in jvms]
        everything = tree_rss(me) - me.memory_info().rss
        launch.check()
    return {"jvm_tasks": len(per_jvm), "rss_per_jvm_task_mib": statistics.median(per_jvm)
            if per_jvm else None, "rss_mib": everything / MIB, "cores": cores}


def one(system: str, storm, workload: str, jars: Path, options: dict, secs: float,
        base: Path, storm_home: Path, warmup: float) -> dict:
    project = load_project(JAVAMIX, WORKLOADS[workload], None, options, False,
                           Home(base / "home").workdir(WORKLOADS[workload]) / "resources",
                           java_jars=jars)
    if system == "storm":
        return on_storm(storm, project, jars, options, secs, base / "storm", warmup)
    return on_runtime(project, Home(base / "home"), storm_home, secs,
                      Path(options["javamix.stats.dir"]), warmup)


def run_once(storm, storm_home: Path, jars: Path, tmp: Path, args, n: int) -> dict:
    result: dict = {}
    for workload in args.workload:
        saturated: dict[str, float] = {}
        for phase in ("saturated",) if args.saturated_only else ("saturated", "fixed"):
            for system in ("storm", "runtime"):
                rate = 0 if phase == "saturated" else max(1, int(saturated["storm"] / 2))
                out = tmp / f"run{n}-{workload}-{phase}-{system}"
                options = {"javamix.rounds": 10**9, "javamix.rate": rate,
                           "javamix.stats.dir": str(out / "stats"),
                           "topology.max.spout.pending": PENDING}
                began = time.time() * 1000
                info = one(system, storm, workload, jars, options, args.seconds, out,
                           storm_home, args.warmup)
                started = min((r["t"] for r in stats(out / "stats")), default=began)
                tput, p99 = measured(out / "stats", started + args.warmup * 1000)
                entry = result.setdefault(workload, {}).setdefault(system, {})
                if phase == "saturated":
                    saturated[system] = tput
                    entry.update(throughput=tput, **info)
                else:
                    entry.update(fixed_rate=rate, p99_ms=p99)
                print(f"  run {n} {workload:9} {phase:9} {system:7} {tput:9.0f} acks/s "
                      f"p99 {p99 if p99 is not None else -1:8.1f} ms "
                      f"{json.dumps(info)}", file=sys.stderr, flush=True)
        result[workload]["ratio"] = result[workload]["runtime"]["throughput"] / \
            result[workload]["storm"]["throughput"]
        result[workload]["loadavg"] = os.getloadavg()
        print(f"  run {n} {workload:9} ratio {result[workload]['ratio']:.2f} (load average "
              f"{' '.join(f'{x:.2f}' for x in os.getloadavg())})", file=sys.stderr, flush=True)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--warmup", type=float, default=8.0)
    parser.add_argument("--json", help="write every run here")
    parser.add_argument("--workload", action="append", choices=list(WORKLOADS),
                        help="run only this workload (repeatable; default: all)")
    parser.add_argument("--saturated-only", action="store_true",
                        help="throughput only: skip the fixed-load p99 phase")
    args = parser.parse_args()
    warn_if_tasks_run_another_heronbridge()
    args.workload = args.workload or list(WORKLOADS)
    with tempfile.TemporaryDirectory(prefix="hb-java-bench-") as tmp_name:
        tmp = Path(tmp_name)
        storm_home = Path(os.environ.get("HERONBRIDGE_HOME", Path.home() / ".heronbridge"))
        storm = fetch(storm_home)
        jars = compile_jars(storm, tmp / "java")
        runs = [run_once(storm, storm_home, jars, tmp, args, n) for n in range(1, args.runs + 1)]
    for workload in args.workload:
        def med(*path: str, workload: str = workload) -> float:
            return statistics.median(_get(r[workload], path) for r in runs)

        print(f"{workload}: throughput storm {med('storm', 'throughput'):.0f}/s, runtime "
              f"{med('runtime', 'throughput'):.0f}/s, ratio {med('ratio'):.2f}; p99 at "
              f"{med('storm', 'fixed_rate'):.0f}/s storm {med('storm', 'p99_ms'):.1f} ms, "
              f"runtime {med('runtime', 'p99_ms'):.1f} ms; memory: runtime "
              f"{med('runtime', 'rss_per_jvm_task_mib'):.0f} MiB per JVM task "
              f"({med('runtime', 'rss_mib'):.0f} MiB in all), Storm "
              f"{med('storm', 'rss_mib'):.0f} MiB in all (median of {len(runs)} runs)")
    if args.json:
        Path(args.json).write_text(json.dumps(runs, indent=1))
    return 0


def _get(entry: dict, path: tuple) -> float:
    for key in path:
        entry = entry.get(key)
        if entry is None:
            return float("nan")
    return float(entry) if entry is not None else float("nan")


if __name__ == "__main__":
    sys.exit(main())
