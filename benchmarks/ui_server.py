"""What `heronbridge ui` costs while it serves 20 running topologies, measured in one run.

    python benchmarks/ui_server.py [--topologies 20] [--seconds 60] [--json FILE]

Starts N small topologies (a spout paced at 100 tuples/s and a bolt), then
`heronbridge ui` in its own process at its default sampling interval (3 s), and, for
`--seconds`, does what one open page and one Prometheus server do: the page's script
reads its topology's data and its sampled tuples every 2 s and its charts' series every
5 s (10% of its spout's tuples sampled), Prometheus scrapes /metrics every 15 s (10 s
here); a full page load and a Storm UI topology page every 5 s. Prints the UI process's
CPU as a share of one core, and the server-side time of each kind of request (its
Server-Timing header: from the request's arrival to the reply's body, without the
network). The targets are under 2% of one core and under 100 ms a page refresh.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "ui"))

from ui_components import Numbers, Sink  # noqa: E402

from heronbridge.runtime import TopologyBuilder, admin  # noqa: E402
from heronbridge.runtime.scheduler import Home  # noqa: E402
from heronbridge.runtime.scheduler.launch import Launch  # noqa: E402

HERONBRIDGE = str(Path(sys.executable).parent / "heronbridge")


def plan(name: str, flags: Path):
    b = TopologyBuilder(name, {"topology.reliability.mode": "ATLEAST_ONCE",
                               "ui.flags": str(flags), "ui.interval": 0.01})
    b.bolt("sink", Sink, inputs=[b.spout("numbers", Numbers)])
    return b.build()


def fetch(url: str) -> float:
    """The request's server-side milliseconds."""
    with urllib.request.urlopen(url, timeout=30) as reply:
        reply.read()
        timing = reply.headers["Server-Timing"]
    return float(timing.split("dur=")[1])


def summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {"n": len(ordered), "median_ms": round(statistics.median(ordered), 2),
            "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))], 2),
            "max_ms": round(ordered[-1], 2)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--topologies", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--warmup", type=float, default=15.0)
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="hb-ui-bench-"))
    home = Home(root / "home")
    flags = root / "flags"
    flags.mkdir()
    launches: list[Launch] = []
    ui = None
    try:
        began = time.monotonic()
        for i in range(args.topologies):
            launch = Launch(plan(f"t{i:02d}", flags), home)
            launches.append(launch)
            launch.start(timeout=300)  # a 2-core machine is busy with the others
        print(f"{len(launches)} topologies running after {time.monotonic() - began:.0f}s")
        ui = subprocess.Popen([HERONBRIDGE, "ui", "--home", str(home.root), "--port", "0"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while not (home.root / "ui.json").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        base = json.loads((home.root / "ui.json").read_text())["url"].rstrip("/")
        admin.set_sampling(launches[0].statemgr, "t00", "numbers", 10)  # the page shows them
        time.sleep(args.warmup)  # every topology sampled a few times
        proc = psutil.Process(ui.pid)
        first = launches[0]
        requests: dict[str, list[float]] = {"page data (every 2 s)": [], "charts (every 5 s)": [],
                                            "sampled tuples (every 2 s)": [], "page load": [],
                                            "Storm topology page": [], "/metrics": []}
        cpu0 = sum(proc.cpu_times()[:2])
        t0 = time.monotonic()
        tick = 0
        while time.monotonic() - t0 < args.seconds:
            requests["page data (every 2 s)"].append(fetch(f"{base}/ui/api/topology/t00"))
            requests["sampled tuples (every 2 s)"].append(
                fetch(f"{base}/ui/api/topology/t00/events"))
            if tick % 5 in (0, 2):
                requests["charts (every 5 s)"].append(
                    fetch(f"{base}/ui/api/topology/t00/series?window=900"))
            if tick % 5 == 0:
                requests["/metrics"].append(fetch(f"{base}/metrics"))
            if tick % 3 == 0:
                requests["page load"].append(fetch(f"{base}/topology/t00"))
                requests["Storm topology page"].append(
                    fetch(f"{base}/api/v1/topology/{first.topology_id}"))
            tick += 1
            time.sleep(max(0.0, t0 + tick * 2.0 - time.monotonic()))
        elapsed = time.monotonic() - t0
        cpu = sum(proc.cpu_times()[:2]) - cpu0
        result = {
            "topologies": len(launches), "seconds": round(elapsed, 1),
            "ui_cpu_share_of_one_core": round(cpu / elapsed, 4),
            "ui_rss_mb": round(proc.memory_info().rss / 2**20, 1),
            "requests": {k: summary(v) for k, v in requests.items()},
        }
    finally:
        if ui is not None:
            ui.terminate()
            ui.wait(30)
        for launch in launches:
            launch.stop()
    print(f"heronbridge ui serving {result['topologies']} topologies for "
          f"{result['seconds']:.0f}s: {result['ui_cpu_share_of_one_core'] * 100:.2f}% of "
          f"one core (target < 2%), {result['ui_rss_mb']} MB resident")
    for kind, s in result["requests"].items():
        print(f"  {kind:24} server-side median {s['median_ms']:6.2f} ms, p95 "
              f"{s['p95_ms']:6.2f} ms, max {s['max_ms']:6.2f} ms over {s['n']} "
              f"(target < 100 ms)")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
