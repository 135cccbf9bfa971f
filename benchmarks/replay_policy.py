"""Issue 25's shape (pystorm ReliableSpout, relay par 3, sink par 3, 3 containers, 5 s
message timeout) with one process SIGKILLed 8 s in, under each way a stream manager can
treat frames for a task that is down: held until the task is back (the default), or
dropped with their trees failed at their timeout (`heronbridge.held.max.bytes=0`).
Prints ids lost, fails per id, fails in all, duplicates and the recovery time.

    python benchmarks/replay_policy.py [--runs N] [--victims "stream manager,relay task"]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1] / "tests" / "faults"),
                str(Path(__file__).resolve().parents[1] / "tests")]

from nemeses import Kill  # noqa: E402
from suite import RelayWorkload, alone, stage_for  # noqa: E402

from heronbridge.runtime.config import HELD_MAX_BYTES  # noqa: E402
from heronbridge.runtime.scheduler import Home  # noqa: E402

POLICIES = {"hold": {}, "fail at timeout": {HELD_MAX_BYTES: 0}}
VICTIMS = {"stream manager": Kill("stream manager"), "relay task": Kill("task", "relay"),
           "container": Kill("container")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--containers", type=int, default=3)
    parser.add_argument("--victims", default="stream manager,relay task,container")
    args = parser.parse_args()
    for victim in args.victims.split(","):
        for policy, options in POLICIES.items():
            for n in range(args.runs):
                with tempfile.TemporaryDirectory() as tmp:
                    home = Home(Path(tmp) / "hb")
                    workload = RelayWorkload(home, home.open_state(), Path(tmp),
                                             args.containers, options=options)
                    with workload.running:
                        v = alone(workload, stage_for(workload, Path(tmp)), VICTIMS[victim],
                                  at=8)
                print(f"{victim:15} {policy:16} run {n}: lost {v.lost}, fails/id max "
                      f"{v.max_fails} p99 {v.p99_fails}, fails {v.replays}, duplicates "
                      f"{v.duplicates}, recovered after {v.recovery_s[0]:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
