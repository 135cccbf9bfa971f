"""The tracing proxy between a test playing Storm's side and a tiny multilang bolt."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from heronbridge.conformance.trace import schema, seed, tracefile
from heronbridge.conformance.trace.proxy import proxy_argv
from heronbridge.runtime.scheduler import pid_alive
from heronbridge.shims.storm.protocol import JsonFraming

pytestmark = pytest.mark.integration

# Multilang over stdin and stdout, as a component without pystorm speaks it.
PROTOCOL = textwrap.dedent("""
    import json, os, sys

    def read():
        lines = []
        while True:
            line = sys.stdin.readline()
            if not line:
                sys.exit(2)
            if line == "end\\n":
                return json.loads("".join(lines))
            lines.append(line)

    def send(msg):
        sys.stdout.write(json.dumps(msg) + "\\nend\\n")
        sys.stdout.flush()

""")

# Doubles each tuple's first value, asks for its task ids, logs them, acks.
BOLT = PROTOCOL + textwrap.dedent("""
    handshake = read()
    open(os.path.join(handshake["pidDir"], str(os.getpid())), "w").close()
    send({"pid": os.getpid()})
    while True:
        msg = read()
        if msg["stream"] == "__heartbeat":
            send({"command": "sync"})
            continue
        send({"command": "emit", "anchors": [msg["id"]], "tuple": [msg["tuple"][0] * 2]})
        targets = read()
        send({"command": "log", "msg": "to %s" % targets})
        send({"command": "ack", "id": msg["id"]})
""")

HEARTBEAT = {"id": "-5", "comp": None, "stream": "__heartbeat", "task": -1, "tuple": []}


class StormSide:
    """Storm's end of the pipes to the proxy."""

    def __init__(self, tmp_path: Path, conf: dict | None = None,
                 proxy_conf: dict | None = None, source: str = BOLT) -> None:
        script = tmp_path / "bolt.py"
        script.write_text(source)
        self.pid_dir = tmp_path / "pids"
        self.pid_dir.mkdir()
        self.conf = conf or {}
        self.proc = subprocess.Popen(
            proxy_argv([sys.executable, str(script)], "json", proxy_conf),
            # Storm starts a component in its resources folder.
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            cwd=tmp_path)
        self.framing = JsonFraming()
        self.inbox: list = []

    def send(self, msg: object) -> None:
        self.proc.stdin.write(JsonFraming.encode(msg))
        self.proc.stdin.flush()

    def recv(self, timeout: float = 10) -> object:
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while not self.inbox:
            left = deadline - time.monotonic()
            assert left > 0, f"no message from the proxy within {timeout}s"
            if select.select([fd], [], [], left)[0]:
                chunk = os.read(fd, 1 << 16)
                assert chunk, f"the proxy closed its stdout: {self.proc.stderr.read()!r}"
                self.inbox += self.framing.feed(chunk)
        return self.inbox.pop(0)

    def handshake(self) -> int:
        self.send({"pidDir": str(self.pid_dir),
                   "conf": {"topology.name": "demo", **self.conf},
                   "context": {"task->component": {"1": "__acker", "2": "double",
                                                   "3": "spout"},
                               "taskid": 2, "componentid": "double",
                               "source->stream->grouping": {"spout": {"default": {}}}}})
        reply = self.recv()
        return reply["pid"]

    def tuple(self, tup_id: str, value: int) -> None:
        self.send({"id": tup_id, "comp": "spout", "stream": "default", "task": 3,
                   "tuple": [value]})

    def close(self) -> int:
        self.proc.stdin.close()
        return self.proc.wait(10)


def traced(folder: Path) -> list[dict]:
    files = tracefile.files(folder)
    assert len(files) == 1, files
    return list(tracefile.read(files[0]))


def test_relays_both_ways_and_traces_under_the_child_s_pid(tmp_path):
    traces = tmp_path / "traces"
    storm = StormSide(tmp_path, proxy_conf={schema.TRACE_DIR: str(traces)})
    pid = storm.handshake()
    assert pid != storm.proc.pid  # the component's own process answered
    assert (storm.pid_dir / str(pid)).exists()
    storm.tuple("1", 21)
    assert storm.recv() == {"command": "emit", "anchors": ["1"], "tuple": [42]}
    storm.send([5, 6])
    assert storm.recv() == {"command": "log", "msg": "to [5, 6]"}
    assert storm.recv() == {"command": "ack", "id": "1"}
    storm.send(HEARTBEAT)
    assert storm.recv() == {"command": "sync"}
    assert storm.close() == 2  # the child's code: pystorm's when Storm goes away
    assert storm.proc.stdout.read() == b""
    got = traced(traces)
    assert (traces / tracefile.file_name("double", 2, pid)).is_file()
    assert [(r["ev"], r.get("id"), r.get("values"), r.get("targets")) for r in got] == [
        ("start", None, None, None), ("recv", "1", "[21]", None),
        ("emit", None, "[42]", [5, 6]), ("ack", "1", None, None)]
    assert got[0]["pid"] == pid


def test_a_fail_fault_answers_storm_and_the_child_never_sees_the_tuple(tmp_path):
    traces = tmp_path / "traces"
    # as on Storm: the options come in the handshake's conf
    storm = StormSide(tmp_path, conf={schema.TRACE_DIR: str(traces), schema.FAULTS: [
        {"component": "double", "task_index": 0, "kind": "fail", "every": 2}]})
    storm.handshake()
    storm.tuple("1", 1)
    assert storm.recv()["tuple"] == [2]
    storm.send([4])
    storm.recv()
    assert storm.recv() == {"command": "ack", "id": "1"}
    storm.tuple("2", 2)
    assert storm.recv() == {"command": "fail", "id": "2"}
    storm.tuple("3", 3)
    assert storm.recv()["tuple"] == [6]
    storm.send([4])
    storm.close()
    assert [(r["ev"], r.get("id"), r.get("injected")) for r in traced(traces)
            if r["ev"] in ("recv", "ack", "fail")] == [
        ("recv", "1", None), ("ack", "1", False), ("recv", "2", None), ("fail", "2", True),
        ("recv", "3", None), ("ack", "3", False)]


def test_an_exit_fault_kills_the_child_and_ends_the_proxy_non_zero(tmp_path):
    traces = tmp_path / "traces"
    storm = StormSide(tmp_path, proxy_conf={schema.TRACE_DIR: str(traces), schema.FAULTS: [
        {"component": "double", "kind": "exit", "after": 1}]})
    pid = storm.handshake()
    storm.tuple("1", 1)
    storm.recv()
    storm.send([4])
    storm.recv()
    storm.recv()
    storm.send(HEARTBEAT)  # the first message after the tuple
    assert storm.proc.wait(10) == 1
    deadline = time.monotonic() + 5
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not pid_alive(pid)
    assert [r["ev"] for r in traced(traces)] == ["start", "recv", "emit", "ack", "exit"]


def test_a_bad_fault_ends_it_at_the_handshake_with_the_reason(tmp_path):
    storm = StormSide(tmp_path, proxy_conf={schema.FAULTS: [
        {"component": "spout", "kind": "exit", "after": 1}]})
    storm.send({"pidDir": str(storm.pid_dir), "conf": {"topology.name": "demo"},
                "context": {"task->component": {"2": "double", "3": "spout"}, "taskid": 3,
                            "componentid": "spout", "source->stream->grouping": {}}})
    assert storm.proc.wait(10) == 1
    err = storm.proc.stderr.read().decode()
    assert "topology 'demo', component 'spout', task 3" in err
    assert "a spout" in err
    assert storm.proc.stdout.read() == b""


MSGPACK_BOLT = textwrap.dedent("""
    import os, msgpack

    unpacker = msgpack.Unpacker(raw=False)

    def read():
        while True:
            for msg in unpacker:
                return msg
            chunk = os.read(0, 65536)
            if not chunk:
                raise SystemExit(2)
            unpacker.feed(chunk)

    def send(msg):
        os.write(1, msgpack.packb(msg, use_bin_type=True))

    handshake = read()
    send({"pid": os.getpid()})
    while True:
        msg = read()
        send({"command": "emit", "anchors": [msg["id"]], "tuple": msg["tuple"],
              "need_task_ids": False})
        send({"command": "ack", "id": msg["id"]})
""")


def test_msgpack_messages_are_relayed_and_traced(tmp_path):
    import msgpack

    script = tmp_path / "bolt.py"
    script.write_text(MSGPACK_BOLT)
    traces = tmp_path / "traces"
    proc = subprocess.Popen(
        proxy_argv([sys.executable, str(script)], "msgpack", {schema.TRACE_DIR: str(traces)}),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=tmp_path)
    proc.stdin.write(msgpack.packb({
        "pidDir": str(tmp_path), "conf": {},
        "context": {"task->component": {"2": "double", "3": "spout"}, "taskid": 2,
                    "componentid": "double", "source->stream->grouping": {"spout": {}}}}))
    proc.stdin.write(msgpack.packb({"id": "1", "comp": "spout", "stream": "default",
                                    "task": 3, "tuple": ["\u00e9", {"k": 1.5}]}))
    proc.stdin.close()
    out = msgpack.Unpacker(raw=False)
    out.feed(proc.stdout.read())
    assert proc.wait(10) == 2
    got = list(out)
    assert got[1:] == [{"command": "emit", "anchors": ["1"], "tuple": ["\u00e9", {"k": 1.5}],
                        "need_task_ids": False}, {"command": "ack", "id": "1"}]
    assert [(r["ev"], r.get("values")) for r in traced(traces)] == [
        ("start", None), ("recv", '["\u00e9",{"k":1.5}]'), ("emit", '["\u00e9",{"k":1.5}]'),
        ("ack", None)]


# Emits a random number for each tuple, and numpy's when it has numpy.
RANDOM_BOLT = BOLT.replace(
    'send({"command": "emit", "anchors": [msg["id"]], "tuple": [msg["tuple"][0] * 2]})',
    'import random; send({"command": "emit", "anchors": [msg["id"]], '
    '"tuple": [random.random()]})')


def test_the_child_starts_after_the_handshake_with_its_task_s_seed(tmp_path):
    import random

    storm = StormSide(tmp_path, conf={schema.SEED: 11}, source=RANDOM_BOLT)
    storm.handshake()
    drawn = []
    for n in range(3):
        storm.tuple(str(n), n)
        drawn.append(storm.recv()["tuple"][0])
        storm.send([4])
        storm.recv()
        storm.recv()
    storm.close()
    random.seed(seed.task_seed(11, "double", 0))
    assert drawn == [random.random() for _ in range(3)]


# A spout that emits one number per next_tuple.
SPOUT = PROTOCOL + textwrap.dedent("""
    read()
    send({"pid": os.getpid()})
    n = 0
    while True:
        msg = read()
        if msg["command"] == "next":
            send({"command": "emit", "tuple": [n], "id": n, "need_task_ids": False})
            n += 1
        send({"command": "sync"})
""")


def test_a_bounded_spout_is_answered_by_the_proxy_once_it_has_emitted_enough(tmp_path):
    traces = tmp_path / "traces"
    storm = StormSide(tmp_path, source=SPOUT, proxy_conf={schema.TRACE_DIR: str(traces),
                                                          schema.BOUND: {"tuples": 2}})
    storm.send({"pidDir": str(tmp_path), "conf": {},
                "context": {"task->component": {"3": "spout"}, "taskid": 3,
                            "componentid": "spout", "source->stream->grouping": {}}})
    storm.recv()
    got = []
    for _ in range(4):
        storm.send({"command": "next", "id": ""})
        while (msg := storm.recv())["command"] != "sync":
            got.append(msg["tuple"])
    storm.close()
    assert got == [[0], [1]]
    assert [r["ev"] for r in traced(traces)] == ["start", "emit", "emit", "stop"]
