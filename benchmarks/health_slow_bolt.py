"""The health manager on and off: a bolt at parallelism 1, three times too slow for its
input, measured in one run.

    python benchmarks/health_slow_bolt.py [--seconds 60] [--rate 240] [--out DIR]

A spout offers `--rate` tuples/s; one bolt spends 3/rate seconds per tuple, so it
handles a third of them and backpressure holds the spout. The topology runs `--seconds`
with the health manager on (interval 2s, window 8s, cool-down 10s), then again with it
off. Every second it samples the bolt's (the sink's) executes per second and the
spouts' backpressure. Prints both runs' rates at the start and over the last 10s, when
the health manager acted and the parallelism it chose, and the time until backpressure
stayed away; plots the sink's tuples/s over time for both runs to
DIR/health-slow-bolt.png (matplotlib) and writes the samples to DIR/health-slow-bolt.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "runtime" / "health"))

from health_components import CostlyBolt  # noqa: E402
from healthkit import Probe, actions, parallelism, topology  # noqa: E402

from heronbridge.runtime.scheduler import Home  # noqa: E402
from heronbridge.runtime.scheduler.launch import Launch  # noqa: E402

SMOOTH = 4  # samples (seconds) per plotted point
HEALTH = {"heronbridge.health.interval.secs": 2.0, "heronbridge.health.window.secs": 8.0,
          "heronbridge.health.cooldown.secs": 10.0}


def run(health: bool, seconds: float, rate: int, home: Path) -> dict:
    config = {**HEALTH, "test.cost": 3 / rate,
              "heronbridge.health": "on" if health else "off"}
    plan = topology(f"health-{'on' if health else 'off'}", CostlyBolt, rate, **config)
    home_ = Home(home / plan.name)
    state = home_.open_statemgr()
    with Launch(plan, home_, state) as launch:
        probe = Probe(state, plan.name)
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            time.sleep(1.0)
            launch.check()
            probe.sample()
        log = [a.text() for a in actions(state, plan.name)]
        par = parallelism(state, plan.name)
    calm = next((t for t, _, _ in probe.points
                 if all(bp < 20 for tt, _, bp in probe.points if tt >= t)), None)
    return {"points": probe.points, "actions": log, "parallelism": par,
            "calm_after_s": calm}


def plot(results: dict, rate: int, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(10, 5))
    for name, result in results.items():
        points = result["points"]
        # A busy task publishes its counters between batches: average over SMOOTH samples.
        smooth = [sum(p[1] for p in points[max(0, i - SMOOTH + 1):i + 1])
                  / len(points[max(0, i - SMOOTH + 1):i + 1]) for i in range(len(points))]
        ax.plot([p[0] for p in points], smooth,
                label=f"health manager {name} (ends at parallelism {result['parallelism']})")
    ax.axhline(rate, linestyle=":", color="grey", label=f"offered ({rate}/s)")
    ax.set_xlabel("seconds since the topology started")
    ax.set_ylabel(f"sink tuples/s (mean of the last {SMOOTH} s)")
    ax.set_title("A bolt 3x too slow for its input, with the health manager on and off")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--rate", type=int, default=240)
    parser.add_argument("--out", type=Path, default=Path("."))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for health in (True, False):
            results["on" if health else "off"] = run(health, args.seconds, args.rate,
                                                     Path(tmp))
    for name, r in results.items():
        first = [p[1] for p in r["points"][2:12]]
        last = [p[1] for p in r["points"] if p[0] >= r["points"][-1][0] - 10]
        calm = r["calm_after_s"]
        print(f"health {name:3}: sink {sum(first) / max(1, len(first)):6.0f} tuples/s in "
              f"seconds 3-12, {sum(last) / max(1, len(last)):6.0f} tuples/s over the last 10s "
              f"(offered {args.rate}); parallelism {r['parallelism']}; backpressure gone "
              + (f"from {calm:.0f}s on" if calm is not None else "never"))
        for line in r["actions"]:
            print(f"    {line}")
    on, off = results["on"], results["off"]
    tail = lambda r: [p[1] for p in r["points"] if p[0] >= r["points"][-1][0] - 10]  # noqa: E731
    ratio = (sum(tail(on)) / len(tail(on))) / max(1e-9, sum(tail(off)) / len(tail(off)))
    print(f"sink rate over the last 10s, on / off: {ratio:.2f}x")
    plot(results, args.rate, args.out / "health-slow-bolt.png")
    (args.out / "health-slow-bolt.json").write_text(json.dumps(results, indent=1))
    print(f"plot: {args.out / 'health-slow-bolt.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
