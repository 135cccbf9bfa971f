"""CPU and peak memory of a system's processes, by kind, read from /proc."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Proc:
    pid: int
    ppid: int
    kind: str
    cpu: float  # seconds, user + system
    peak_rss: int  # bytes (VmHWM)


def descendants(root: int | None = None) -> list[Proc]:
    """Every live process under `root` (default: this one), classified by what it runs."""
    root = os.getpid() if root is None else root
    procs: dict[int, tuple[int, float, str]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        cpu = (int(fields[11]) + int(fields[12])) / TICKS
        procs[int(entry)] = (int(fields[1]), cpu, kind_of([c.decode(errors="replace")
                                                            for c in cmd if c]))
    children: dict[int, list[int]] = {}
    for pid, (ppid, _, _) in procs.items():
        children.setdefault(ppid, []).append(pid)
    out, todo = [], list(children.get(root, []))
    while todo:
        pid = todo.pop()
        ppid, cpu, kind = procs[pid]
        out.append(Proc(pid, ppid, kind, cpu, _peak_rss(pid)))
        todo.extend(children.get(pid, []))
    return out


def kind_of(cmd: list[str]) -> str:
    """'storm jvm', 'storm component', 'task', 'stream manager', ... from a command line."""
    if not cmd:
        return "other"
    if os.path.basename(cmd[0]).startswith("java"):
        return "storm jvm"
    text = " ".join(cmd)
    if "heronbridge.conformance.bench.probe_run" in text or "streamparse" in text:
        return "storm component" if "heronbridge.runtime" not in text else "task subprocess"
    for module, kind in (("heronbridge.runtime.instance", "task"),
                         ("heronbridge.runtime.stream_manager", "stream manager"),
                         ("heronbridge.runtime.metrics_manager", "metrics manager"),
                         ("heronbridge.runtime.topology_master", "topology master"),
                         ("heronbridge.runtime.scheduler", "executor"),
                         ("heronbridge.conformance.bench.fused", "fused")):
        if module in text:
            return kind
    return "other"


def _peak_rss(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def cpu_by_kind(before: list[Proc], after: list[Proc]) -> dict[str, float]:
    """CPU seconds each kind spent between two readings (processes new since count whole)."""
    earlier = {p.pid: p.cpu for p in before}
    out: dict[str, float] = {}
    for p in after:
        out[p.kind] = out.get(p.kind, 0.0) + p.cpu - earlier.get(p.pid, 0.0)
    return out


def memory_by_kind(procs: list[Proc]) -> dict[str, dict[str, float]]:
    """{kind: {processes, peak_rss_mb (the largest), total_mb}}."""
    out: dict[str, dict[str, float]] = {}
    for p in procs:
        entry = out.setdefault(p.kind, {"processes": 0, "peak_rss_mb": 0.0, "total_mb": 0.0})
        entry["processes"] += 1
        entry["peak_rss_mb"] = max(entry["peak_rss_mb"], p.peak_rss / 2**20)
        entry["total_mb"] += p.peak_rss / 2**20
    return out
