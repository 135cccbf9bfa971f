"""What a flame graph costs the task it samples, measured in one run.

    python benchmarks/profile_cost.py [--rounds 3] [--seconds 10] [--json FILE]

Starts a topology whose one bolt task is CPU-bound (tests/ui's Work with its `busy`
flag: each tuple computes `crunch()`), so that its throughput is what its CPU allows.
Each round measures the task's executed tuples per second for `--seconds` before, while
py-spy records a flame graph of it exactly as the UI's "Flame graph" button does
(heronbridge.ui.profiles, 100 samples a second), and after; the cost is the rate while
sampled against the mean of the rates around it. Prints each round and the median. The
target is under 5%.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "ui"))

from ui_components import Numbers, Sink, Work  # noqa: E402

from heronbridge.runtime import TopologyBuilder, control  # noqa: E402
from heronbridge.runtime.scheduler import Home  # noqa: E402
from heronbridge.runtime.scheduler.launch import Launch  # noqa: E402
from heronbridge.ui import profiles  # noqa: E402


def plan(flags: Path):
    b = TopologyBuilder("profiled", {
        "topology.reliability.mode": "ATLEAST_ONCE", "ui.flags": str(flags),
        "ui.interval": 0.0, "topology.max.spout.pending": 200,
        "heronbridge.metrics.interval.secs": 0.2})
    work = b.bolt("work", Work, inputs=[b.spout("numbers", Numbers)])
    b.bolt("sink", Sink, inputs=[work])
    return b.build()


def executed(launch: Launch, task: int) -> tuple[float, float]:
    """(the task's own sample time, its executed count) from its latest metrics."""
    report = control.metrics(launch.statemgr, launch.name)
    m = next(t for t in report.tasks if t.task_id == task)
    return m.timestamp_ms / 1000, m.counters.get("execute-count", 0.0)


def rate(launch: Launch, task: int, seconds: float) -> float:
    t0, n0 = executed(launch, task)
    time.sleep(seconds)
    t1, n1 = executed(launch, task)
    return (n1 - n0) / (t1 - t0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="hb-profile-bench-"))
    flags = root / "flags"
    flags.mkdir()
    (flags / "busy-work").touch()  # every tuple computes crunch(): the task is CPU-bound
    launch = Launch(plan(flags), Home(root / "home"))
    launch.start(timeout=120)
    rounds = []
    try:
        deadline = time.monotonic() + 60
        while not (found := [t.task_id for t in control.metrics(launch.statemgr, launch.name)
                             .tasks if t.component == "work"]) and time.monotonic() < deadline:
            time.sleep(0.5)  # its first metrics
        task = found[0]
        pid = profiles.task_pid(SimpleNamespace(id=launch.topology_id, name=launch.name), task)
        time.sleep(5)  # past the start
        for _ in range(args.rounds):
            before = rate(launch, task, args.seconds)
            svg: list[bytes] = []
            recorder = threading.Thread(target=lambda out=svg: out.append(
                profiles.flame_graph(pid, args.seconds + 2)))
            recorder.start()
            time.sleep(1)  # py-spy attached and sampling
            during = rate(launch, task, args.seconds)
            recorder.join()
            after = rate(launch, task, args.seconds)
            assert svg and b"crunch" in svg[0], "the flame graph names the hot function"
            cost = 1 - during / ((before + after) / 2)
            rounds.append({"before": round(before, 1), "during": round(during, 1),
                           "after": round(after, 1), "cost": round(cost, 4)})
            print(f"  tuples/s before {before:8.1f}, while sampled {during:8.1f}, after "
                  f"{after:8.1f}: cost {cost * 100:5.1f}%", flush=True)
    finally:
        launch.stop()
    median = statistics.median(r["cost"] for r in rounds)
    print(f"flame graph at {profiles.RATE} samples/s of a CPU-bound task: median cost "
          f"{median * 100:.1f}% of its throughput over {len(rounds)} rounds (target < 5%)")
    if args.json:
        Path(args.json).write_text(json.dumps({"rounds": rounds, "median_cost": median},
                                              indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
