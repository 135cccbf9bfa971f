"""Issue 25's shape (pystorm ReliableSpout, relay par 3, sink par 3, 3 containers, 5 s
message timeout) with one process SIGKILLed 8 s in, under each way a stream manager can
treat frames for a task that is down: held until the task is back (the default), or
dropped with their trees failed at their timeout (`heronbridge.held.max.bytes=0`).
Prints ids lost, fails per id, fails in all and the time until acks flow again.

    python benchmarks/replay_policy.py [--runs N] [--victims "stream manager,relay task"]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1] / "tests" / "faults"),
                str(Path(__file__).resolve().parents[1] / "tests")]

from relaykit import RelayRun  # noqa: E402

from heronbridge.runtime.config import HELD_MAX_BYTES  # noqa: E402
from heronbridge.runtime.scheduler import Home  # noqa: E402

POLICIES = {"hold": {}, "fail at timeout": {HELD_MAX_BYTES: 0}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--containers", type=int, default=3)
    parser.add_argument("--victims", default="stream manager,relay task,container")
    args = parser.parse_args()
    rows = []
    for victim in args.victims.split(","):
        for policy, options in POLICIES.items():
            for n in range(args.runs):
                with tempfile.TemporaryDirectory() as tmp:
                    home = Home(Path(tmp) / "hb")
                    run = RelayRun(home, home.open_state(), Path(tmp), args.containers,
                                   options=options)
                    with run.running:
                        v = run.kill_at(8, victim)
                row = (victim, policy, n, len(v.lost), v.max_fails, v.p99_fails(), v.replays,
                       v.duplicates, v.recovery_s)
                rows.append(row)
                print("%-15s %-16s run %d: lost %d, fails/id max %d p99 %d, fails %d, "
                      "duplicates %d, acks flowing after %.1f s" % row, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
