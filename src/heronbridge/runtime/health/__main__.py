"""Entry point: `python -m heronbridge.runtime.health --state URI --topology NAME`."""

from __future__ import annotations

import signal
import sys
import threading

from ..addresses import metrics_address
from ..instance.metrics import MetricsPublisher
from ..process import start
from ..statemgr import TOPOLOGIES
from .manager import COMPONENT, HealthManager


def main(argv: list[str] | None = None) -> int:
    process = start("heronbridge-health", "Run a topology's health manager.", argv)
    args, secret = process.args, process.secret()
    statemgr = process.statemgr()
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    topology = statemgr.get(TOPOLOGIES, args.topology)
    if topology is None:
        print(f"topology {args.topology!r} is not in the state manager", file=sys.stderr)
        return 2
    topology_id = topology.id
    # Its counters travel as a task's do, through container 0's metrics manager.
    publisher = MetricsPublisher(metrics_address(topology_id, 0), topology_id, COMPONENT, -2,
                                 secret)
    try:
        HealthManager(statemgr, args.topology, publisher.publish).run(stop)
    finally:
        publisher.close()
        statemgr.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
