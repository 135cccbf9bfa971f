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
    """CPU seconds (user + system) of every process below this one, keyed by its kind
    (a task also by its id)."""
    from heronbridge.runtime.procfs import descendants

    out: dict[str, float] = {}
    for proc in descendants():
        key = proc.kind
        if key == "task" and "--task" in proc.cmd:
            key = f"task {proc.cmd[proc.cmd.index('--task') + 1]}"
        out[key] = out.get(key, 0.0) + proc.cpu
    return out
