"""The smaller holes: a topology's home, logs and metrics are its owner's only and another
user reads none of them; the secret is in no process's environment or command line; an
empty (0-byte) packing plan is refused, not read as a plan without containers, so every
container keeps running; a secret node of the wrong size is reported as corrupt, each
time it is read, and a good one read after it is used."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from pathlib import Path

import psutil
import pytest
from rt_components import RecordingBolt, ReplayingSpout
from testkit import Running, read_jsonl, wait_until

from heronbridge.runtime import TopologyBuilder
from heronbridge.runtime.errors import StateManagerError
from heronbridge.runtime.scheduler import Home
from heronbridge.runtime.state import PACKING_PLANS, TOPOLOGIES

COUNT = 800

PEEK = r'''
import json, os, sys
out = {}
for path in sys.argv[1:]:
    try:
        if os.path.isdir(path):
            os.listdir(path)
        else:
            open(path, "rb").read(1)
        out[path] = "read"
    except OSError as exc:
        out[path] = type(exc).__name__
print(json.dumps(out))
'''


def acked(out):
    return {r["seq"] for rs in read_jsonl(out, "spout-*.jsonl").values() for r in rs
            if r["event"] == "ack"}


@pytest.mark.integration
def test_files_are_the_owners_the_secret_is_in_no_environ_and_an_empty_plan_is_refused(
        tmp_path, attacker):
    # A home the attacker can reach (pytest's own folders are not): under a folder open
    # to all, as a user's home folder often is.
    open_folder = Path(tempfile.mkdtemp(prefix="hb-open-"))
    os.chmod(open_folder, 0o755)
    home = Home(open_folder / "home")
    state = home.open_state()
    try:
        run_private(home, state, tmp_path, attacker, open_folder)
    finally:
        state.close()
        shutil.rmtree(open_folder, ignore_errors=True)


def run_private(home, state, tmp_path, attacker, open_folder):
    b = TopologyBuilder("private", {"topology.reliability.mode": "ATLEAST_ONCE",
                                    "test.out": str(tmp_path / "out"), "test.count": COUNT,
                                    "test.interval": 0.004})
    b.spout("a-source", ReplayingSpout)
    b.bolt("record", RecordingBolt, inputs=["a-source"])
    with Running(b.build(), home, state) as running:
        out = tmp_path / "out"
        wait_until(lambda: acked(out), 60, "the first acks", on_timeout=running.logs)
        container = running.workdir / "container-0"
        wait_until((container / "metrics.jsonl").exists, 30, "metrics")
        logs = sorted((container / "logs").glob("*.log"))
        assert stat.S_IMODE(home.root.stat().st_mode) == 0o700
        for path in [*logs, container / "metrics.jsonl"]:
            assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
        seen = attacker.run(PEEK, open_folder, home.root, logs[0],
                            container / "metrics.jsonl")
        assert seen.pop(str(open_folder)) == "read"  # it gets as far as the home ...
        assert set(seen.values()) == {"PermissionError"}, seen  # ... and no further
        # The secret: in no process's environment or command line.
        secret = state.get_secret("private")
        tid = state.get(TOPOLOGIES, "private").id
        procs = [p for p in psutil.process_iter(["cmdline", "environ"])
                 if tid in " ".join(p.info["cmdline"] or [])
                 or str(running.workdir) in " ".join(p.info["cmdline"] or [])]
        assert len(procs) >= 4  # the tasks, the managers, the master, the executor
        for p in procs:
            shown = " ".join(p.info["cmdline"] or []) + repr(p.info["environ"] or {})
            assert secret.hex() not in shown and secret.hex().upper() not in shown
        # A packing plan cut to nothing: refused, so nothing is stopped.
        good = (home.root / "state" / PACKING_PLANS / "private").read_bytes()
        (home.root / "state" / PACKING_PLANS / "private").write_bytes(b"")
        with pytest.raises(StateManagerError, match="is empty .0 bytes.: expected a "
                                                    "PackingPlan"):
            state.get(PACKING_PLANS, "private")
        wait_until(lambda: acked(out) >= set(range(COUNT)), 90, "every id acked",
                   on_timeout=running.logs)
        assert "container 0: packing" not in running.logs()
        (home.root / "state" / PACKING_PLANS / "private").write_bytes(good)


def test_a_corrupt_secret_node_is_reported_as_corrupt_and_not_kept(state):
    state.put_secret("t", b"x" * 5)
    for _ in range(2):
        with pytest.raises(StateManagerError, match=r"secrets/t is corrupt: expected 32 "
                                                    "random bytes, received 5"):
            state.get_secret("t")
    state.put_secret("t", b"y" * 32)
    assert state.get_secret("t") == b"y" * 32
