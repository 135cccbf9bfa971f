"""The command line's `bench` verb: one topology on Storm and on the runtime, measured."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from ..errors import HeronbridgeError
from . import extras
from .options import Parents
from .terminal import console, out, parse_options


def add_verb(verbs: Any, parents: Parents) -> None:
    bench = verbs.add_parser(
        "bench", parents=[parents.home], help="throughput and latency on Storm and on the runtime",
        description="Run a streamparse project on Apache Storm (local mode, multilang) and "
                    "on the runtime, one after the other, each at saturation and then at "
                    "one fixed offered load, and its components fused in one process (the "
                    "ceiling); print sink throughput, complete latency, CPU per tuple and "
                    "peak memory per process kind, and the ratios.")
    bench.add_argument("--project", default=".", help="the streamparse project (default: .)")
    bench.add_argument("-n", "--name", help="which topology (topologies/NAME.py)")
    bench.add_argument("-e", "--environment", help="the config.json environment")
    bench.add_argument("-o", "--option", action="append", metavar="KEY=VALUE",
                       help="a topology option on both systems (value read as JSON)")
    bench.add_argument("--par", type=int, help="every bolt's parallelism (default: the "
                                               "project's)")
    bench.add_argument("--acking", choices=("on", "off"), default="on",
                       help="off: topology.acker.executors=0 (at most once)")
    bench.add_argument("--sink", action="append", metavar="COMPONENT",
                       help="whose input tuples count (default: bolts nothing reads)")
    bench.add_argument("--rate", type=float, help="the fixed offered load, spout tuples/s "
                                                  "(default: half Storm's saturated rate)")
    bench.add_argument("--warmup", type=float, default=5.0,
                       help="seconds left out first (default: %(default)s)")
    bench.add_argument("--seconds", type=float, default=10.0,
                       help="length of each measured window (default: %(default)s)")
    bench.add_argument("--systems", default="storm,runtime",
                       help="which systems, in order (storm, runtime)")
    bench.add_argument("--no-fused", action="store_true", help="skip the fused ceiling")
    bench.add_argument("--out", metavar="DIR",
                       help="folder for runs, plots and bench.json (default: under --home)")
    bench.add_argument("--json", metavar="FILE", help="write the result as JSON here too")
    bench.set_defaults(func=cmd_bench)


def cmd_bench(args: argparse.Namespace) -> int:
    bench = extras.load("heronbridge.conformance.bench.bench", "conformance",
                        "heronbridge bench")
    from heronbridge.compat.projects import topology_name
    from heronbridge.conformance.bench.report import markdown, plots, table

    systems = tuple(s.strip() for s in args.systems.split(",") if s.strip())
    if not systems or any(s not in bench.SYSTEMS for s in systems):
        msg = f"--systems: expected a list of {list(bench.SYSTEMS)}, received {args.systems!r}"
        raise HeronbridgeError(msg)
    project = Path(args.project).resolve()
    settings = bench.Settings(
        project=project, topology=args.name, environment=args.environment,
        options=parse_options(args.option), par=args.par, acking=args.acking == "on",
        sink=tuple(args.sink or ()), rate=args.rate, warmup=args.warmup,
        seconds=args.seconds, systems=systems, fused=not args.no_fused, home=Path(args.home))
    name = topology_name(project, args.name)
    folder = Path(args.out) if args.out else \
        Path(args.home) / "bench" / f"{name}-{time.strftime('%Y%m%d-%H%M%S')}"
    with console.status("benchmarking") as status:
        result = bench.run_bench(settings, folder, display=status.update)
    out.print(table(result))
    for path in plots(result, folder):
        console.print(f"plot: {path}")
    (folder / "bench.md").write_text(markdown(result))  # the table, beside its plots
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))
    console.print(f"results in {folder.resolve()} (bench.json, its table as bench.md, plots, "
                  "each system's run)")
    return 0

