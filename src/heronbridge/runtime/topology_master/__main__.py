"""Entry point: `python -m heronbridge.runtime.topology_master ...`."""

from __future__ import annotations

import sys

from ..process import start
from ..wire.aio import run_loop
from .master import TopologyMaster


def main(argv: list[str] | None = None) -> int:
    process = start("heronbridge-tmaster", "Run a topology's master.", argv)
    secret = process.secret()

    async def run() -> int:
        return await TopologyMaster(process.statemgr(), process.args.topology, secret).run()

    return run_loop(run())


if __name__ == "__main__":
    sys.exit(main())
