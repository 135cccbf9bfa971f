"""Measurements the benchmarks share."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


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


def warn_if_tasks_run_another_heronbridge() -> None:
    """Tasks start without PYTHONPATH: under `PYTHONPATH=src python benchmarks/...` they
    run the installed package's code, not this checkout's. Say so before measuring."""
    import heronbridge

    here = str(Path(heronbridge.__file__).resolve().parent)
    found = subprocess.run([sys.executable, "-I", "-c",
                            "import heronbridge, pathlib; "
                            "print(pathlib.Path(heronbridge.__file__).resolve().parent)"],
                           capture_output=True, text=True, check=False).stdout.strip()
    if found != here:
        print(f"warning: the tasks will run heronbridge from {found or '(not installed)'}, "
              f"not {here}: `pip install -e .` to measure this checkout", file=sys.stderr)
