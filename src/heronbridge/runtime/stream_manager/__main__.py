"""Entry point of a stream manager: `python -m heronbridge.runtime.stream_manager ...`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..process import start
from ..wire.aio import run_loop
from .manager import StreamManager


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--container", type=int, required=True)
    p.add_argument("--logs", default="logs",
                   help="the container's folder of task logs, which log requests read")


def main(argv: list[str] | None = None) -> int:
    process = start("heronbridge-stmgr", "Run one container's stream manager.", argv,
                    _arguments)
    args, secret = process.args, process.secret()

    async def run() -> int:
        return await StreamManager(process.statemgr(), args.topology, args.container,
                                   secret, Path(args.logs)).run()

    return run_loop(run())


if __name__ == "__main__":
    sys.exit(main())
