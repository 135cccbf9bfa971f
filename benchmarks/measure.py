"""Measurements the benchmarks share."""

from __future__ import annotations


def steady_rate(samples: dict[float, float], words: float) -> float:
    """Sink tuples/s between 10% and 90% of the run's words, from the count task's
    cumulative samples: the pipeline filling and draining are left out."""
    points = sorted(samples.items())
    inside = [(t, n) for t, n in points if 0.1 * words <= n <= 0.9 * words]
    if len(inside) < 2:
        msg = f"too few samples inside the steady window: {points}"
        raise SystemExit(msg)
    (t0, n0), (t1, n1) = inside[0], inside[-1]
    return (n1 - n0) / (t1 - t0)


def cpu_by_process() -> dict[str, float]:
    """CPU seconds (user + system) of every runtime process, keyed by what it runs; a
    process a task started (a multilang component) counts as that task's subprocess."""
    import psutil

    kinds: dict[int, str] = {}
    spent: list[tuple[psutil.Process, float]] = []
    for proc in psutil.Process().children(recursive=True):
        try:
            cmd = proc.cmdline()
            times = proc.cpu_times()
        except psutil.Error:
            continue
        module = next((a for a in cmd if a.startswith("heronbridge.runtime.")), None)
        if module is not None:
            kind = module.removeprefix("heronbridge.runtime.")
            if kind == "instance":
                kind = "task " + cmd[cmd.index("--task") + 1]
            kinds[proc.pid] = kind
        spent.append((proc, times.user + times.system))
    out: dict[str, float] = {}
    for proc, seconds in spent:
        kind = kinds.get(proc.pid) or kinds.get(proc.ppid(), "other") + " subprocess"
        out[kind] = out.get(kind, 0.0) + seconds
    return out
