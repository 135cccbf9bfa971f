"""Soak: issue 25's shape (pystorm's ReliableSpout with its defaults, relay par 3, sink par
3, 3 containers on 127.0.0.1-3, 5 s message timeout) for 30 minutes with a fault every
30 s, each nemesis in turn: SIGKILL of every process kind, SIGSTOP of a stream manager
and of a task past the timeouts, a partition between 127.0.0.2 and 127.0.0.3 (as root,
with iptables and cgroup2), the topology master paused.

Reports, and plots into --out: each process kind's resident memory over time (the
largest process of the kind, and their sum), the recovery time of every fault, the
restarts, and what came out: ids acked by the spout that no sink saw (must be 0), fails
per id, duplicates.

    python benchmarks/soak.py [--minutes 30] [--every 30] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests" / "faults"), str(ROOT / "tests")]

import pytest  # noqa: E402
from nemeses import HostGroups, Kill, Partition, Pause, needs_root  # noqa: E402
from suite import RelayWorkload, stage_for, strike  # noqa: E402

from heronbridge.runtime.procfs import PAGE, descendants  # noqa: E402
from heronbridge.runtime.scheduler import Home  # noqa: E402

SAMPLE_SECS = 5.0


def nemeses(partitions: bool) -> list:
    found = [Kill("stream manager"), Kill("task", "relay"), Kill("task", "sink"),
             Kill("executor"), Kill("topology master"), Kill("metrics manager"),
             Kill("container"), Kill("task", "ids"), Pause("stream manager"),
             Pause("task", "sink"), Pause("topology master")]
    return [*found, Partition()] if partitions else found


def rss(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE
    except (OSError, ValueError, IndexError):
        return 0


def memory() -> dict[str, dict[str, float]]:
    """{kind: {max_mb, total_mb, processes}} of this process's topology processes now."""
    out: dict[str, dict[str, float]] = {}
    for proc in descendants():
        if proc.kind in ("other", "scheduler"):
            continue
        mb = rss(proc.pid) / 2**20
        entry = out.setdefault(proc.kind, {"max_mb": 0.0, "total_mb": 0.0, "processes": 0})
        entry["max_mb"] = max(entry["max_mb"], mb)
        entry["total_mb"] += mb
        entry["processes"] += 1
    return out


def plot(result: dict, out: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    samples = result["memory"]
    kinds = sorted({k for s in samples for k in s["kinds"]})
    fig, axes = plt.subplots(2, 1, figsize=(10, 8), sharex=True)
    for kind in kinds:
        t = [s["t"] / 60 for s in samples if kind in s["kinds"]]
        axes[0].plot(t, [s["kinds"][kind]["max_mb"] for s in samples if kind in s["kinds"]],
                     label=kind)
        axes[1].plot(t, [s["kinds"][kind]["total_mb"] for s in samples
                         if kind in s["kinds"]], label=kind)
    for f in result["faults"]:
        for ax in axes:
            ax.axvline(f["t"] / 60, color="0.85", linewidth=0.6, zorder=0)
    axes[0].set_ylabel("largest process, MB")
    axes[1].set_ylabel("all processes of the kind, MB")
    axes[1].set_xlabel("minutes (grey: a fault)")
    axes[0].legend(fontsize=8, ncol=3)
    axes[0].set_title("resident memory per process kind, a fault every "
                      f"{result['every_s']:.0f} s")
    memory_png = out / "soak-memory.png"
    fig.tight_layout()
    fig.savefig(memory_png, dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(10, 4))
    by_name: dict[str, list] = defaultdict(list)
    for f in result["faults"]:
        by_name[f["nemesis"]].append(f)
    for name, faults in sorted(by_name.items()):
        ax.scatter([f["t"] / 60 for f in faults], [f["recovery_s"] for f in faults],
                   label=name, s=18)
    ax.set_xlabel("minutes")
    ax.set_ylabel("recovery, s")
    ax.legend(fontsize=7, ncol=3)
    ax.set_title("recovery after each fault (from its heal)")
    recovery_png = out / "soak-recovery.png"
    fig.tight_layout()
    fig.savefig(recovery_png, dpi=110)
    plt.close(fig)
    return [memory_png, recovery_png]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30)
    parser.add_argument("--every", type=float, default=30, help="seconds between faults")
    parser.add_argument("--out", type=Path, default=Path("soak-out"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    partitions = needs_root("partitions") is None
    monkeypatch = pytest.MonkeyPatch()
    groups = HostGroups() if partitions else None
    if groups is not None:
        groups.patch_local_scheduler(monkeypatch)
    catalog = nemeses(partitions)
    seconds = args.minutes * 60
    result: dict = {"minutes": args.minutes, "every_s": args.every, "memory": [],
                    "faults": []}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        home = Home(tmp / "hb")
        workload = RelayWorkload(home, home.open_state(), tmp, 3,
                                 ids=int(100 * (seconds + 120)))
        stage = stage_for(workload, tmp, hosts=groups)
        began = time.monotonic()
        next_sample = next_fault = 0.0
        try:
            with workload.running:
                while not workload.started():
                    workload.running.check()
                    time.sleep(0.2)
                began = time.monotonic()
                next_fault = args.every
                n = 0
                while time.monotonic() - began < seconds:
                    now = time.monotonic() - began
                    if now >= next_sample:
                        result["memory"].append({"t": now, "kinds": memory()})
                        next_sample = now + SAMPLE_SECS
                    if now >= next_fault:
                        nemesis = catalog[n % len(catalog)]
                        n += 1
                        done, recovery = strike(workload, stage, nemesis)
                        fault = {"t": now, "nemesis": nemesis.name, "done": done,
                                 "recovery_s": round(recovery, 2)}
                        result["faults"].append(fault)
                        print(f"{now / 60:5.1f} min  {done}: recovered after "
                              f"{recovery:.1f} s", flush=True)
                        next_fault = now + args.every
                    workload.running.check()
                    time.sleep(0.2)
                time.sleep(30)  # the last fault's replays
                result["memory"].append({"t": time.monotonic() - began, "kinds": memory()})
                restarts = sum(log.read_text(errors="replace").count("restarting in")
                               for log in workload.running.workdir.glob(
                                   "container-*/executor.log"))
        finally:
            stage.close()
            if groups is not None:
                groups.close()
            monkeypatch.undo()
        v = workload.run.verdict()
    result["outcome"] = {"acked": len(v.acked), "lost": len(v.lost), "lost_ids": v.lost[:50],
                         "fails_per_id_max": v.max_fails, "fails_per_id_p99": v.p99_fails(),
                         "fails": v.replays, "duplicates": v.duplicates,
                         "spout_starts": v.starts, "process_restarts": restarts}
    kinds = sorted({k for s in result["memory"] for k in s["kinds"]})
    first, last = result["memory"][0]["kinds"], result["memory"][-1]["kinds"]
    result["memory_summary"] = {
        k: {"first_max_mb": round(first.get(k, {}).get("max_mb", 0), 1),
            "peak_max_mb": round(max(s["kinds"].get(k, {}).get("max_mb", 0)
                                     for s in result["memory"]), 1),
            "last_max_mb": round(last.get(k, {}).get("max_mb", 0), 1)} for k in kinds}
    recoveries = sorted(f["recovery_s"] for f in result["faults"])
    result["recovery_summary"] = {
        "faults": len(recoveries),
        "median_s": recoveries[len(recoveries) // 2] if recoveries else None,
        "max_s": recoveries[-1] if recoveries else None}
    (args.out / "soak.json").write_text(json.dumps(result, indent=1))
    pngs = plot(result, args.out)
    print(json.dumps({k: result[k] for k in ("outcome", "memory_summary",
                                             "recovery_summary")}, indent=1))
    print("plots:", *map(str, pngs))
    return 0 if v.lost == [] else 1


if __name__ == "__main__":
    sys.exit(main())
