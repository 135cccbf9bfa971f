"""Entry point of a task process: `python -m heronbridge.runtime.instance ...`."""

from __future__ import annotations

import argparse
import gc
import logging
import sys

from ..wire.auth import inherited_keys
from .runner import InstanceRunner


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="heronbridge-instance",
                                     description="Run one task of a topology.")
    parser.add_argument("--topology-id", required=True)
    parser.add_argument("--task", type=int, required=True)
    parser.add_argument("--container", type=int, required=True)
    parser.add_argument("--stmgr", required=True, help="stream manager address")
    parser.add_argument("--metrics", required=True, help="metrics manager address")
    parser.add_argument("--incarnation", type=int, default=0)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    # Tuples are short-lived and acyclic: the cyclic collector only costs time here.
    gc.freeze()
    gc.set_threshold(100_000, 50, 100)
    secret, checkpoint_key = inherited_keys()
    runner = InstanceRunner(args.topology_id, args.task, args.container,
                            _address(args.stmgr), _address(args.metrics), secret,
                            args.incarnation, checkpoint_key)
    return runner.run()


def _address(text: str) -> str:
    # Abstract Unix socket names start with NUL, which cannot travel in argv.
    return "\0" + text[1:] if text.startswith("@") else text


if __name__ == "__main__":
    sys.exit(main())
