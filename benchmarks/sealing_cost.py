"""CPU cost of authenticating frames on a TCP link (runtime/wire/sealing.py), per tuple.

    python benchmarks/sealing_cost.py [--seconds S]

Seals records of word-count data frames (tracked tuples, msgpack, as the emitter
batches them) and verifies them on the receiving side, for records of 1 to 64 frames
and frames of 1 to 100 tuples, and prints CPU microseconds per tuple (process time, so a
busy machine changes it little) and per record. A tuple crossing a TCP link pays this
once; compare with the runtime's CPU per sink tuple (`benchmarks/wordcount_runtime.py`).
"""

from __future__ import annotations

import argparse
import os
import time

import msgspec

from heronbridge.runtime.wire import frames, sealing


def frame_of(tuples: int) -> bytes:
    records = [[[f"word{i}", 1], (7 << frames.ROOT_TASK_SHIFT) | i, 12345 + i]
               for i in range(tuples)]
    return frames.data_frame(3, 2, 0, msgspec.msgpack.encode(records))


def cost(frames_per_record: int, tuples_per_frame: int, seconds: float) -> tuple[float, float]:
    key = os.urandom(32)
    sealer, opener = sealing.Sealer(key), sealing.SealedAssembler(key)
    record = [frame_of(tuples_per_frame)] * frames_per_record
    records = 0
    began = time.process_time()
    while time.process_time() - began < seconds:
        for _ in range(100):
            data, found = opener.feed(b"".join(sealer.seal(record)))
        assert len(found) == frames_per_record
        records += 100
    spent = time.process_time() - began
    return (spent / (records * frames_per_record * tuples_per_frame) * 1e6,
            spent / records * 1e6)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="per measurement")
    args = parser.parse_args()
    print("seal + verify, CPU us per tuple (per record)")
    print("frames/record  " + "".join(f"{t:>10} t/f" for t in (1, 10, 100)))
    for per_record in (1, 4, 16, 64):
        row = [cost(per_record, t, args.seconds) for t in (1, 10, 100)]
        print(f"{per_record:>13}  " + "".join(f"{u:>7.3f} ({r:>5.1f})" for u, r in row))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
