"""The command line's `bench` verb: one topology on Storm and on the runtime, measured."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rich.console import Console

console = Console(stderr=True, soft_wrap=True)


def add_verb(verbs: Any, parents: list[argparse.ArgumentParser]) -> None:
    bench = verbs.add_parser(
        "bench", parents=parents, help="throughput and latency on Storm and on the runtime",
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
    bench.add_argument("--warmup", type=float, default=5.0, help="seconds left out first")
    bench.add_argument("--seconds", type=float, default=10.0,
                       help="length of each measured window")
    bench.add_argument("--systems", default="storm,runtime",
                       help="which systems, in order (storm, runtime)")
    bench.add_argument("--no-fused", action="store_true", help="skip the fused ceiling")
    bench.add_argument("--out", default="bench-out", help="folder for runs, plots, bench.json")
    bench.add_argument("--json", metavar="FILE", help="write the result as JSON here too")
    bench.set_defaults(func=cmd_bench)


def cmd_bench(args: argparse.Namespace) -> int:
    from heronbridge import HeronbridgeError
    from heronbridge.conformance.bench import BenchError
    from heronbridge.conformance.bench.bench import SYSTEMS, Settings, run_bench
    from heronbridge.conformance.bench.report import plots, table

    from .cli import out, parse_option

    systems = tuple(s.strip() for s in args.systems.split(",") if s.strip())
    if not systems or any(s not in SYSTEMS for s in systems):
        msg = f"--systems: expected a list of {list(SYSTEMS)}, received {args.systems!r}"
        raise HeronbridgeError(msg)
    settings = Settings(
        project=Path(args.project).resolve(), topology=args.name,
        environment=args.environment, options=dict(parse_option(o) for o in args.option or []),
        par=args.par, acking=args.acking == "on", sink=tuple(args.sink or ()), rate=args.rate,
        warmup=args.warmup, seconds=args.seconds, systems=systems, fused=not args.no_fused,
        home=Path(args.home) if getattr(args, "home", None) else None)
    folder = Path(args.out)
    try:
        with console.status("benchmarking") as status:
            result = run_bench(settings, folder, display=status.update)
    except BenchError as exc:
        raise HeronbridgeError(str(exc)) from exc
    out.print(table(result))
    try:
        written = plots(result, folder)
    except ImportError:
        written = []  # matplotlib comes with the conformance extra
    for path in written:
        console.print(f"plot: {path}")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))
    return 0
