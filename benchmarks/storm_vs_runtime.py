"""Storm vs. the runtime on the example workloads, every combination in one run.

    python benchmarks/storm_vs_runtime.py [--seconds S] [--warmup S] [--only NAME] [--json FILE]

Runs `heronbridge bench` (heronbridge.conformance.bench.run_bench) for word count with acking on and
off and for the RTAC-shaped example, each at bolt parallelism 1 and 2: Storm 2.8 in
local mode with the components as multilang subprocesses, then the runtime with them
in-process, then the fused ceiling. The fixed offered load is half of Storm's saturated
spout rate. Prints one line per combination and the ratios the issue tracks.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from measure import warn_if_tasks_run_another_heronbridge

from heronbridge.conformance.bench.bench import Settings, run_bench

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "storm_topologies"
WORKLOADS = {
    # name: (project, options making the input endless, acking, sink)
    "wordcount": ("wordcount", {"wordcount.rounds": 10**9}, True, ()),
    "wordcount-unacked": ("wordcount", {"wordcount.rounds": 10**9}, False, ()),
    # country_counts sees one tuple per new user (389 in all); uniques sees every event.
    "rtac": ("rtac", {"rtac.count": 10**9}, True, ("uniques",)),
}


def _f(value: float | None, fmt: str = "{:.2f}") -> str:
    return "-" if value is None else fmt.format(value)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--warmup", type=float, default=5.0)
    parser.add_argument("--only", choices=sorted(WORKLOADS), action="append")
    parser.add_argument("--par", type=int, action="append", help="default: 1 and 2")
    parser.add_argument("--json", help="write every result here")
    args = parser.parse_args()
    warn_if_tasks_run_another_heronbridge()
    results = []
    with tempfile.TemporaryDirectory(prefix="hb-bench-") as tmp:
        for name in args.only or list(WORKLOADS):
            project, options, acking, sink = WORKLOADS[name]
            for par in args.par or [1, 2]:
                settings = Settings(project=EXAMPLES / project, options=dict(options),
                                    par=par, acking=acking, sink=sink, warmup=args.warmup,
                                    seconds=args.seconds)
                out = Path(tmp) / f"{name}-par{par}"
                result = run_bench(settings, out, display=lambda t: print("  ..", t,
                                                                             file=sys.stderr))
                result["workload"] = name
                results.append(result)
                storm, runtime = result["systems"]["storm"], result["systems"]["runtime"]
                r = result["ratios"]
                sat = storm["saturation"]
                task = runtime["memory"].get("task", {})
                print(f"{name:18} par {par}: sink/s storm {sat['sink_per_s']:>8,.0f}"
                      f"  runtime {runtime['saturation']['sink_per_s']:>8,.0f}"
                      f"  fused {result['fused']['sink_per_s']:>8,.0f}"
                      f" | at {runtime['fixed']['offered_per_s']:,.0f}/s p99 ms storm "
                      f"{_f(storm['fixed']['p99_ms'], '{:.1f}')} runtime "
                      f"{_f(runtime['fixed']['p99_ms'], '{:.1f}')}"
                      f" | runtime/storm {_f(r['throughput_runtime_over_storm'])}"
                      f"  p99 storm/runtime {_f(r['p99_latency_storm_over_runtime'])}"
                      f"  runtime/fused {_f(r['throughput_runtime_over_fused'])}"
                      f" | CPU s/M storm {storm['saturation']['cpu_s_per_million']:.0f}"
                      f" runtime {runtime['saturation']['cpu_s_per_million']:.1f}"
                      f" | task RSS MB {task.get('peak_rss_mb', 0):.0f}",
                      flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
