"""Entry point of a stream manager: `python -m heronbridge.runtime.stream_manager ...`."""

from __future__ import annotations

import argparse
import logging
import sys

from ..state import open_state
from ..wire.aio import run_loop
from ..wire.auth import inherited_secret
from .manager import StreamManager


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="heronbridge-stmgr",
                                     description="Run one container's stream manager.")
    parser.add_argument("--state", required=True, help="state manager location")
    parser.add_argument("--topology", required=True)
    parser.add_argument("--container", type=int, required=True)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")

    secret = inherited_secret()

    async def start() -> int:
        return await StreamManager(open_state(args.state), args.topology, args.container,
                                   secret).run()

    return run_loop(start())


if __name__ == "__main__":
    sys.exit(main())
