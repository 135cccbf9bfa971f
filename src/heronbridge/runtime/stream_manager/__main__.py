"""Entry point of a stream manager: `python -m heronbridge.runtime.stream_manager ...`."""

from __future__ import annotations

import sys

from ..process import start
from ..wire.aio import run_loop
from .manager import StreamManager


def main(argv: list[str] | None = None) -> int:
    process = start("heronbridge-stmgr", "Run one container's stream manager.", argv,
                    lambda p: p.add_argument("--container", type=int, required=True))
    args, secret = process.args, process.secret()

    async def run() -> int:
        return await StreamManager(process.statemgr(), args.topology, args.container,
                                   secret).run()

    return run_loop(run())


if __name__ == "__main__":
    sys.exit(main())
