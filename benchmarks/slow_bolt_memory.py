"""Memory under overload: a bolt 100 times slower than its spout, measured in one run.

    python benchmarks/slow_bolt_memory.py [--mode both] [--seconds 300] [--out DIR]

A spout offers `--rate` tuples/s of `--payload` bytes each to one bolt that spends
`--sleep` seconds per tuple (by default 20,000/s against 200/s), for `--seconds`, under
at-least-once (msg ids, no max spout pending: only backpressure holds the spout back)
and at-most-once. Every second it samples the resident memory of every process of the
topology. Then the spout stops taking new input and the run drains: under at-least-once
every msg id must end acked (failed ones are emitted again), under at-most-once the bolt
must execute every tuple emitted, and no stream manager may drop a frame. Prints each
process's peak and last resident memory against `--bound-mb` and writes the curves to
DIR/slow-bolt-memory-MODE.png (matplotlib), the samples to DIR/slow-bolt-memory.json.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "faults"))

from memory_components import PacedSpout, SlowBolt  # noqa: E402

from heronbridge.runtime import TopologyBuilder, control  # noqa: E402
from heronbridge.runtime.plan import TaskLayout  # noqa: E402
from heronbridge.runtime.procfs import PAGE, descendants  # noqa: E402
from heronbridge.runtime.scheduler import Home  # noqa: E402
from heronbridge.runtime.scheduler.launch import Launch  # noqa: E402
from heronbridge.runtime.telemetry import DROPPED_FRAMES  # noqa: E402

MODES = ("ATLEAST_ONCE", "ATMOST_ONCE")
BOUND_MB = 64.0  # every process, at every sample


def rss_mb(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * PAGE / 2**20
    except (OSError, ValueError, IndexError):
        return None


def label(proc, components: dict[int, str]) -> str:
    """A process's name in the results: its kind, a task's component and id."""
    cmd = proc.cmd
    if proc.kind == "task" and "--task" in cmd:
        task = int(cmd[cmd.index("--task") + 1])
        return f"{components.get(task, 'task')} task {task}"
    return proc.kind


def run(mode: str, seconds: float, rate: int = 20_000, sleep: float = 0.005,
        payload: int = 1000, drain_timeout: float = 300, home: Path | None = None) -> dict:
    """One run; returns {samples: {process: [[t, MB], ...]}, peak_mb, last_mb, counts}."""
    with tempfile.TemporaryDirectory(prefix="hb-slow-bolt-") as tmp:
        out = Path(tmp) / "tally"
        out.mkdir()
        builder = TopologyBuilder(f"slow-bolt-{mode.lower().replace('_', '-')}", {
            "topology.reliability.mode": mode, "bench.out": str(out), "bench.rate": rate,
            "bench.payload": payload, "bench.sleep": sleep,
            "heronbridge.health": "off"})  # the slow bolt must stay slow: memory under it
        spout = builder.spout("spout", PacedSpout)
        builder.bolt("bolt", SlowBolt, inputs=[spout])
        launch = Launch(builder.build(), Home(home or Path(tmp) / "home"))
        before = {proc.pid for proc in descendants()}  # a caller's (a test's Spark cluster)
        launch.start()
        try:
            return _measure(launch, out, seconds, drain_timeout, before)
        finally:
            launch.stop()


def _theirs(procs: list, before: set[int]) -> set[int]:
    """The processes that ran before the topology started, and those under them."""
    parent = {p.pid: p.ppid for p in procs}
    found = set()
    for p in procs:
        pid = p.pid
        while pid in parent and pid not in before:
            pid = parent[pid]
        if pid in before:
            found.add(p.pid)
    return found


def _measure(launch: Launch, out: Path, seconds: float, drain_timeout: float,
             before: set[int]) -> dict:
    name = launch.plan.name
    components = TaskLayout.of(launch.plan).task_component
    began = time.monotonic()
    (out / "until").write_text(str(time.time() + seconds))  # when the spout's input stops
    samples: dict[str, list[list[float]]] = {}
    spout_tally = out / "spout.json"
    window_end = began + seconds
    drained_at = None
    while True:
        now = time.monotonic()
        procs = descendants()
        theirs = _theirs(procs, before)
        for proc in procs:
            mb = rss_mb(proc.pid)
            if mb is not None and proc.kind != "other" and proc.pid not in theirs:
                samples.setdefault(label(proc, components), []).append([round(now - began, 1),
                                                            round(mb, 2)])
        if now >= window_end:
            if drained_at is None and _drained(launch, spout_tally):
                drained_at = now
                break
            if now - window_end > drain_timeout:
                break
        time.sleep(max(0.0, 1.0 - (time.monotonic() - now)))
    counts = _counts(launch, name, spout_tally)
    counts["drain_s"] = None if drained_at is None else round(drained_at - window_end, 1)
    peak = {k: max(mb for _, mb in v) for k, v in samples.items()}
    last = {k: v[-1][1] for k, v in samples.items()}
    return {"samples": samples, "peak_mb": peak, "last_mb": last, "counts": counts,
            "seconds": seconds}


def _drained(launch: Launch, tally: Path) -> bool:
    counts = _counts(launch, launch.plan.name, tally)
    if not counts["stopped"]:
        return False
    if launch.plan.config["topology.reliability.mode"] == "ATLEAST_ONCE":
        return counts["outstanding"] == 0
    return counts["bolt_executed"] >= counts["spout_emitted"]


def _counts(launch: Launch, name: str, tally: Path) -> dict:
    spout = json.loads(tally.read_text()) if tally.exists() else {}
    totals: dict[str, dict[str, float]] = {}
    for task in control.metrics(launch.statemgr, name).tasks:
        mine = totals.setdefault(task.component, {})
        for key, value in task.counters.items():
            mine[key] = mine.get(key, 0) + value
    return {"stopped": spout.get("stopped", False), "unique_emitted": spout.get("emitted", 0),
            "outstanding": spout.get("outstanding"), "fails": spout.get("failed", 0),
            "spout_emitted": totals.get("spout", {}).get("emit-count", 0),
            "bolt_executed": totals.get("bolt", {}).get("execute-count", 0),
            "timed_out": totals.get("spout", {}).get("timeout-count", 0),
            "dropped_frames": totals.get("__stmgr__", {}).get(DROPPED_FRAMES, 0)}


def plot(result: dict, mode: str, path: Path, bound: float) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(10, 5))
    for process, points in sorted(result["samples"].items()):
        ax.plot([t for t, _ in points], [mb for _, mb in points], label=process)
    ax.axhline(bound, color="red", linestyle="--", label=f"bound {bound:.0f} MB")
    ax.axvline(result["seconds"], color="grey", linestyle=":", label="input stops; drain")
    ax.set_xlabel("seconds")
    ax.set_ylabel("resident memory, MB")
    ax.set_ylim(0, bound * 1.25)
    ax.set_title(f"a bolt 100x slower than its spout, {mode.lower().replace('_', '-')}")
    ax.legend(loc="upper right", fontsize="small", ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def verdict(result: dict, mode: str, bound: float) -> list[str]:
    """What is wrong with a run (empty when nothing is)."""
    c = result["counts"]
    wrong = [f"{p} reached {mb:.1f} MB (bound {bound:.0f} MB)"
             for p, mb in result["peak_mb"].items() if mb > bound]
    if c["dropped_frames"]:
        wrong.append(f"stream managers dropped {c['dropped_frames']:.0f} frames")
    if c["drain_s"] is None:
        wrong.append(f"did not drain: {c}")
    elif mode == "ATMOST_ONCE" and c["bolt_executed"] != c["spout_emitted"]:
        wrong.append(f"the bolt executed {c['bolt_executed']:.0f} of {c['spout_emitted']:.0f}")
    elif mode == "ATLEAST_ONCE" and c["outstanding"] != 0:
        wrong.append(f"{c['outstanding']} msg ids never acked")
    return wrong


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", default="both", choices=["both", *MODES])
    parser.add_argument("--seconds", type=float, default=300)
    parser.add_argument("--rate", type=int, default=20_000, help="spout tuples/s offered")
    parser.add_argument("--sleep", type=float, default=0.005, help="bolt seconds per tuple")
    parser.add_argument("--payload", type=int, default=1000, help="bytes per tuple")
    parser.add_argument("--bound-mb", type=float, default=BOUND_MB)
    parser.add_argument("--out", default=".", help="folder for the PNGs and the JSON")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results, failed = {}, False
    for mode in MODES if args.mode == "both" else (args.mode,):
        result = run(mode, args.seconds, args.rate, args.sleep, args.payload)
        results[mode] = result
        png = out / f"slow-bolt-memory-{mode.lower().replace('_', '-')}.png"
        plot(result, mode, png, args.bound_mb)
        c = result["counts"]
        print(f"{mode.lower().replace('_', '-')}: {args.seconds:.0f} s, spout offering "
              f"{args.rate:,}/s of {args.payload} B, bolt {1 / args.sleep:,.0f}/s, "
              f"{os.cpu_count()} cores")
        print(f"  emitted {c['spout_emitted']:,.0f} (new ids {c['unique_emitted']:,}), "
              f"executed {c['bolt_executed']:,.0f}, timed out {c['timed_out']:,.0f}, "
              f"failed {c['fails']:,}, dropped frames {c['dropped_frames']:,.0f}, drained in "
              f"{c['drain_s']} s")
        for process in sorted(result["peak_mb"]):
            print(f"  {process:<16} peak {result['peak_mb'][process]:6.1f} MB, at the end "
                  f"{result['last_mb'][process]:6.1f} MB")
        wrong = verdict(result, mode, args.bound_mb)
        print("  " + ("; ".join(wrong) if wrong else
                      f"every process under {args.bound_mb:.0f} MB, nothing dropped"))
        print(f"  curve: {png}")
        failed = failed or bool(wrong)
    (out / "slow-bolt-memory.json").write_text(json.dumps(results))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
