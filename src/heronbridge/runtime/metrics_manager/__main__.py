"""Entry point: `python -m heronbridge.runtime.metrics_manager ...`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..config import TopologyConfig
from ..plan.codec import topology_from_proto
from ..process import start
from ..statemgr import TOPOLOGIES
from ..wire import tls
from ..wire.aio import run_loop
from .manager import MetricsManager


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--container", type=int, required=True)
    parser.add_argument("--sink", required=True, help="JSON-lines file to append samples to")
    parser.add_argument("--interval", type=float, default=1.0)


def main(argv: list[str] | None = None) -> int:
    process = start("heronbridge-metricsmgr", "Run one container's metrics manager.", argv,
                    arguments)
    args = process.args
    statemgr = process.statemgr()
    topology = statemgr.get(TOPOLOGIES, args.topology)
    if topology is None:
        print(f"topology {args.topology!r} is not in the state manager", file=sys.stderr)
        return 2

    secret = process.secret()
    conf = TopologyConfig.read(topology_from_proto(topology).config, args.topology)
    _, tls_dial = tls.contexts(conf.tls, args.topology)

    async def run() -> int:
        return await MetricsManager(statemgr, args.topology, topology.id, args.container,
                                    Path(args.sink), args.interval, secret, tls_dial,
                                    conf.log_max_bytes, conf.log_backup_count).run()

    return run_loop(run())


if __name__ == "__main__":
    sys.exit(main())
