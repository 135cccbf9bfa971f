"""Entry point: `python -m heronbridge.runtime.health --state URI --topology NAME`."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading

from ..addresses import metrics_address
from ..instance.metrics import MetricsPublisher
from ..state import TOPOLOGIES, open_state
from ..wire.auth import inherited_secret
from .manager import COMPONENT, HealthManager


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="heronbridge-health",
                                     description="Run a topology's health manager.")
    parser.add_argument("--state", required=True, help="state manager location")
    parser.add_argument("--topology", required=True)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    secret = inherited_secret()
    state = open_state(args.state)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    topology_id = state.get(TOPOLOGIES, args.topology).id
    # Its counters travel as a task's do, through container 0's metrics manager.
    publisher = MetricsPublisher(metrics_address(topology_id, 0), topology_id, COMPONENT, -2,
                                 secret)
    try:
        HealthManager(state, args.topology, publisher.publish).run(stop)
    finally:
        publisher.close()
        state.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
