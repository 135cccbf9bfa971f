"""Write (or, with --check, compare) the link protocol's test vectors:
src/heronbridge/runtime/wire/protocol_vectors.json, from fixed inputs through the
runtime's own implementation (see PROTOCOL.md beside it)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from heronbridge.runtime.wire import auth, frames, sealing
from heronbridge.runtime.wire.auth import Identity

PATH = Path(__file__).resolve().parent.parent / "src/heronbridge/runtime/wire/protocol_vectors.json"

CASES = [
    {"secret": bytes(range(32)), "role": "stmgr",
     "identity": ("wordcount-0123456789ab", "stmgr-1", "tcp:127.0.0.1:40123"),
     "nonce_d": bytes([0xD0 + i % 16 for i in range(32)]),
     "nonce_l": bytes([0xA0 + i % 16 for i in range(32)])},
    {"secret": bytes(range(100, 132)), "role": "task",
     "identity": ("wordcount-0123456789ab", "stmgr-0", "unix:/tmp/hb-x/stmgr-0.sock"),
     "nonce_d": bytes(32), "nonce_l": bytes([0xFF] * 32)},
]


def frames_of(case: int) -> list[list[bytes]]:
    """The writes sealed in each case: a control-like frame, then two data frames at once."""
    return [[frames.int_frame(frames.ACK, 7, [case + 1, 2])],
            [frames.data_frame(3, 1, 0, b"\x91\x91\xa3one"),
             frames.data_frame(4, 1, 0, b"\x91\x91\xa3two")]]


def vectors() -> dict:
    out = []
    for i, case in enumerate(CASES):
        identity = Identity(*case["identity"])
        said = auth.transcript(case["role"], identity.encode(), case["nonce_d"],
                               case["nonce_l"])
        k_dl, k_ld = sealing.derive(case["secret"], said)
        records = []
        for direction, key in (("dialer->listener", k_dl), ("listener->dialer", k_ld)):
            sealer = sealing.Sealer(key)
            for seq, writes in enumerate(frames_of(i)):
                records.append({"direction": direction, "seq": seq,
                                "frames": [f.hex() for f in writes],
                                "record": b"".join(sealer.seal(list(writes))).hex()})
        out.append({
            "secret": case["secret"].hex(), "role": case["role"],
            "identity": dict(zip(("topology", "name", "address"), case["identity"],
                                 strict=True)),
            "nonce_d": case["nonce_d"].hex(), "nonce_l": case["nonce_l"].hex(),
            "identity_bytes": identity.encode().hex(),
            "hello": auth._hello(case["role"], case["nonce_d"], identity).hex(),  # noqa: SLF001
            "transcript": said.hex(),
            "proof_l": auth.proof(case["secret"], b"listener", said).hex(),
            "proof_d": auth.proof(case["secret"], b"dialer", said).hex(),
            "challenge": (auth.MAGIC + case["nonce_l"]
                          + auth.proof(case["secret"], b"listener", said)).hex(),
            "k_dl": k_dl.hex(), "k_ld": k_ld.hex(), "sealed": identity.sealed,
            "records": records})
    return {"protocol": "HBA2", "spec": "PROTOCOL.md", "cases": out}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args()
    made = json.dumps(vectors(), indent=1) + "\n"
    if args.check:
        if PATH.read_text() != made:
            print(f"{PATH} differs from what the implementation gives", file=sys.stderr)
            return 1
        return 0
    PATH.write_text(made)
    return 0


if __name__ == "__main__":
    sys.exit(main())
