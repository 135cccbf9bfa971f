"""Write jvm/src/test/resources/frame_vectors.json: frames and value records as the Python
runtime builds them, and a conformance trace file as the tracing hook writes it, which the
JVM task host's tests must read and write byte for byte.

Run: python scripts/jvm_vectors.py          (rewrites the file)
     python scripts/jvm_vectors.py --check  (exit 1 if it is stale)
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import vector_files  # scripts/, beside this one

from heronbridge.conformance.trace import tracefile
from heronbridge.runtime.proto import control_pb2, topology_pb2
from heronbridge.runtime.wire import frames
from heronbridge.runtime.wire.serde import make_serializer

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "jvm" / "src" / "test" / "resources" / "frame_vectors.json"

# Values a Java component may send or receive (no floats whose text differs between the
# languages' shortest forms, no maps of more than one key: their order is the encoder's).
VALUES = [
    ["hello", 1, -2, 2**31, -(2**31) - 1, 2**40, 1.5, -0.25, True, False, None],
    [[1, "a", [2.5]], {"k": "v"}, {}, [], "", "naïve ☃ \U0001F600", "quote\" back\\ nl\n tab\t"],
    ["x" * 40, "y" * 300, 127, 128, 255, 256, 65535, 65536, -32, -33, -128, -129],
]
ROOT = (7 << frames.ROOT_TASK_SHIFT) | 12345
EDGE = 0x5A5A5A5A5A5A5A5
RECORDS = [[v] for v in VALUES] + [[VALUES[0], ROOT, EDGE],
                                   [VALUES[1], -1, [0, ROOT, EDGE, ROOT + 1, EDGE ^ 1]]]


def vectors() -> dict:
    out: dict = {"records": [], "frames": []}
    for name in ("msgpack", "json"):
        encode = make_serializer(name).encode
        for i in range(len(RECORDS)):
            batch = RECORDS[i:i + 1]
            out["records"].append({"serializer": name, "records": batch,
                                   "bytes": encode(batch).hex()})
        out["records"].append({"serializer": name, "records": RECORDS,
                               "bytes": encode(RECORDS).hex()})
    blob = make_serializer("msgpack").encode(RECORDS[:1])
    cases = [
        ("data", frames.data_frame(12, 3, 5, blob)),
        ("init", frames.int_frame(frames.INIT, 3, [ROOT, EDGE])),
        ("ack", frames.int_frame(frames.ACK, 0, [ROOT, EDGE, ROOT + 1, 0])),
        ("fail", frames.int_frame(frames.FAIL, 0, [ROOT])),
        ("acked", frames.int_frame(frames.ACKED, 3, [ROOT, ROOT + 1])),
        ("register", frames.control_frame(control_pb2.RegisterInstanceRequest(
            topology_id="wordcount-0123456789ab", task_id=3, pid=4242))),
        ("started", frames.control_frame(control_pb2.InstanceStarted(task_id=3))),
        ("state", frames.control_frame(
            control_pb2.TopologyStateChange(state=topology_pb2.RUNNING))),
    ]
    for name, frame in cases:
        out["frames"].append({"name": name, "bytes": frame.hex()})
    out["trace"] = trace_vector()
    return out


# A trace file in JSON: {"map": [[key, value], ...]} is a map in that order, {"bin": hex}
# bytes (a record's canonical values and msg ids), anything else itself.
TRACE_FILE_HEAD = {"map": [["component", "count"], ["task", 3], ["pid", 4242],
                           ["t", 1700000000.25], ["spout", False], ["topology", "javamix"],
                           ["tasks", {"map": [["count", [3, 4]], ["split", [2]]]}]]}
TRACE_BLOCKS = [
    {"head": {"map": [["n", 3], ["seq", 0], ["t1", 1700000000.75], ["active", 1700000000.75],
                      ["totals", {"map": [["start", 1], ["recv", 1], ["emit", 1]]}],
                      ["pending", 0], ["pending_ids", []], ["first_emit", 1700000000.75],
                      ["last_emit", 1700000000.75], ["emitted", 0], ["stopped", None]]},
     "rows": [[1700000000.5, 0, None, None, None, None, None, None, None, None, None,
               {"map": [["pid", 4242], ["tasks", {"map": [["count", [3, 4]]]}]]}],
              [1700000000.625, 1, "7", "default", {"bin": b'["cow"]'.hex()}, "split", 2],
              [1700000000.75, 2, None, "default", {"bin": b'["cow",1]'.hex()}, None, None,
               [], None, [5]]]},
    {"head": {"map": [["n", 1], ["seq", 3], ["t1", 1700000001.5], ["active", 1700000001.5],
                      ["totals", {"map": [["start", 1], ["recv", 1], ["emit", 1],
                                          ["ack", 1]]}],
                      ["pending", 0], ["pending_ids", []], ["first_emit", 1700000000.75],
                      ["last_emit", 1700000000.75], ["emitted", 0], ["stopped", None]]},
     "rows": [[1700000001.5, 3, "7"]]},
]


def _py(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _py(v) for k, v in value["map"]} if "map" in value else \
            bytes.fromhex(value["bin"])
    if isinstance(value, list):
        return [_py(v) for v in value]
    return value


def trace_vector() -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "count-3-4242.trace"
        writer = tracefile.Writer(path, _py(TRACE_FILE_HEAD))
        for block in TRACE_BLOCKS:
            writer.block(_py(block["head"]), [tuple(_py(r)) for r in block["rows"]])
        writer.close()
        data = path.read_bytes()
        assert [r["ev"] for r in tracefile.read(path)] == ["start", "recv", "emit", "ack"]
    return {"file_head": TRACE_FILE_HEAD, "blocks": TRACE_BLOCKS, "bytes": data.hex()}


def text() -> str:
    return json.dumps(vectors(), indent=1, ensure_ascii=False) + "\n"


def main() -> int:
    return vector_files.main(OUT, text, __doc__.splitlines()[0])


if __name__ == "__main__":
    sys.exit(main())
