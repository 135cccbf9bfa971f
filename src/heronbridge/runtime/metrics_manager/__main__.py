"""Entry point: `python -m heronbridge.runtime.metrics_manager ...`."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from ..config import TopologyConfig
from ..plan.codec import topology_from_proto
from ..state import TOPOLOGIES, open_state
from ..wire import tls
from ..wire.aio import run_loop
from ..wire.auth import inherited_secret
from .manager import MetricsManager


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="heronbridge-metricsmgr",
                                     description="Run one container's metrics manager.")
    parser.add_argument("--state", required=True)
    parser.add_argument("--topology", required=True)
    parser.add_argument("--container", type=int, required=True)
    parser.add_argument("--sink", required=True, help="JSON-lines file to append samples to")
    parser.add_argument("--interval", type=float, default=1.0)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    state = open_state(args.state)
    topology = state.get(TOPOLOGIES, args.topology)
    if topology is None:
        print(f"topology {args.topology!r} is not in the state manager", file=sys.stderr)
        return 2

    secret = inherited_secret()
    conf = TopologyConfig.read(topology_from_proto(topology).config, args.topology)
    _, tls_dial = tls.contexts(conf.tls, args.topology)

    async def start() -> int:
        return await MetricsManager(state, args.topology, topology.id, args.container,
                                    Path(args.sink), args.interval, secret, tls_dial,
                                    conf.log_max_bytes, conf.log_backup_count).run()

    return run_loop(start())


if __name__ == "__main__":
    sys.exit(main())
