"""Entry point: `python -m heronbridge.runtime.topology_master ...`."""

from __future__ import annotations

import argparse
import logging
import sys

from ..state import open_state
from ..wire.aio import run_loop
from ..wire.auth import inherited_secret
from .master import TopologyMaster


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="heronbridge-tmaster",
                                     description="Run a topology's master.")
    parser.add_argument("--state", required=True, help="state manager location")
    parser.add_argument("--topology", required=True)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")

    secret = inherited_secret()

    async def start() -> int:
        return await TopologyMaster(open_state(args.state), args.topology, secret).run()

    return run_loop(start())


if __name__ == "__main__":
    sys.exit(main())
