"""Entry point of a task process: `python -m heronbridge.runtime.instance ...`."""

from __future__ import annotations

import argparse
import gc
import io
import sys

from ..process import start
from .runner import run
from .task import Task


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--topology-id", required=True)
    parser.add_argument("--task", type=int, required=True)
    parser.add_argument("--container", type=int, required=True)
    parser.add_argument("--stmgr", required=True, help="stream manager address")
    parser.add_argument("--metrics", required=True, help="metrics manager address")
    parser.add_argument("--incarnation", type=int, default=0)


def main(argv: list[str] | None = None) -> int:
    # stderr is the pipe to the executor, which files the lines: buffered, and flushed
    # once a turn (Task.flush), not once a line, for a component that logs every tuple
    # (logging flushes each of its own records; exit flushes the rest).
    sys.stderr = io.TextIOWrapper(io.BufferedWriter(io.FileIO(2, "w", closefd=False), 1 << 16),
                                  encoding=sys.stderr.encoding, errors="backslashreplace")
    process = start("heronbridge-instance", "Run one task of a topology.", argv, arguments,
                    topology=False)
    args = process.args
    # Tuples are short-lived and acyclic: the cyclic collector only costs time here.
    gc.freeze()
    gc.set_threshold(100_000, 50, 100)
    secret, checkpoint_key = process.keys()
    task = Task(args.topology_id, args.task, args.container, _address(args.stmgr),
                _address(args.metrics), secret, args.incarnation, checkpoint_key)
    return run(task)


def _address(text: str) -> str:
    # Abstract Unix socket names start with NUL, which cannot travel in argv.
    return "\0" + text[1:] if text.startswith("@") else text


if __name__ == "__main__":
    sys.exit(main())
