"""Time to the first tuple of a topology with a virtualenv of its own: cold and warm.

    python benchmarks/virtualenv_start.py [--runs 3] [--project examples/virtualenvs/semver2]

Each run starts `heronbridge run` on the project and stops at the first tuple a bolt
receives (its `<component>-<task>.first` file, the examples' `pins.output.dir`):

- cold: an empty heronbridge home (the virtualenv is built), uv's download cache warm;
- cold, nothing cached: uv's cache empty too (its wheels come from the package index);
- warm: the home from a previous run (the virtualenv is reused).

Prints each run's seconds and the median of each kind.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def first_tuple(project: Path, home: Path, env: dict[str, str], timeout: float = 300) -> float:
    """Seconds from `heronbridge run` to the first tuple a bolt received."""
    out = Path(tempfile.mkdtemp(prefix="first-"))
    began = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "heronbridge", "run", "--project",
                             str(project), "--home", str(home), "-o",
                             f"pins.output.dir={out}"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        while not list(out.glob("*.first")):
            if proc.poll() is not None:
                msg = f"heronbridge run exited before the first tuple:\n{proc.stderr.read()}"
                raise RuntimeError(msg)
            if time.monotonic() - began > timeout:
                msg = "no first tuple within the timeout"
                raise RuntimeError(msg)
            time.sleep(0.02)
        return time.monotonic() - began
    finally:
        proc.terminate()
        proc.communicate(timeout=120)
        shutil.rmtree(out, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--project", type=Path, default=ROOT / "examples" / "virtualenvs" /
                        "semver2")
    args = parser.parse_args()
    results: dict[str, list[float]] = {"cold": [], "cold, nothing cached": [], "warm": []}
    with tempfile.TemporaryDirectory(prefix="venv-start-") as tmp:
        base = {k: v for k, v in os.environ.items() if k != "HERONBRIDGE_HOME"}
        warm_home = Path(tmp) / "warm"
        first_tuple(args.project, warm_home, base)  # builds what the warm runs reuse
        for run in range(args.runs):
            home = Path(tmp) / f"cold-{run}"
            results["cold"].append(first_tuple(args.project, home, base))
            env = {**base, "UV_CACHE_DIR": str(Path(tmp) / f"uv-{run}")}
            results["cold, nothing cached"].append(
                first_tuple(args.project, Path(tmp) / f"bare-{run}", env))
            results["warm"].append(first_tuple(args.project, warm_home, base))
    for kind, times in results.items():
        print(f"{kind}: {', '.join(f'{t:.2f}' for t in times)} s; median "
              f"{statistics.median(times):.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
