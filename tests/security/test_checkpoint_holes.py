"""Holes 3 and 9. A checkpoint root shared by several users: another user who made the
topology's folder first, or planted state there, is refused by name and nothing of theirs
is unpickled; a file that was not written under the topology's checkpoint key (altered,
or another task's) is refused. A corrupt newest checkpoint is passed over for the one
before it, once, and every word still counts exactly once."""

from __future__ import annotations

import os
import pickle
import signal
import stat
import tempfile
import time
from pathlib import Path

import pytest
from stateful_components import expected_counts
from test_e2e_stateful import counts, plan
from testkit import Running, wait_until

from heronbridge.runtime.checkpoint import CheckpointStorage
from heronbridge.runtime.checkpoint.partitions import restored_state
from heronbridge.runtime.errors import CheckpointError
from heronbridge.runtime.plan import TaskLayout
from heronbridge.runtime.state import STATEFUL_CHECKPOINTS

KEY = b"c" * 32

PLANT = r'''
import os, pickle, sys, json
root, marker = sys.argv[1], sys.argv[2]
class Boom:
    def __reduce__(self):
        return (open, (marker, "w"))
folder = os.path.join(root, "victim", "0001", "count")
os.makedirs(folder)
for path in (os.path.join(root, "victim"), os.path.join(root, "victim", "0001"), folder):
    os.chmod(path, 0o777)
with open(os.path.join(folder, "1"), "wb") as f:
    f.write(pickle.dumps({"word": Boom()}))
print(json.dumps({"planted": True}))
'''


@pytest.fixture
def shared_root():
    root = Path(tempfile.mkdtemp(prefix="hb-shared-"))
    os.chmod(root, 0o1777)  # a root every user may write, as /tmp
    yield root
    import shutil

    shutil.rmtree(root, ignore_errors=True)


def test_another_users_folders_and_state_are_refused(shared_root, attacker):
    marker = shared_root / "pwned"
    assert attacker.run(PLANT, shared_root, marker) == {"planted": True}
    storage = CheckpointStorage(str(shared_root), "victim", KEY)
    with pytest.raises(CheckpointError, match=r"victim.*checkpoint folder .*/victim belongs "
                                              rf"to uid {attacker.uid}"):
        storage.save("0002", "count", 1, pickle.dumps({}))
    with pytest.raises(CheckpointError, match="belongs to uid"):
        restored_state(storage, "0001", "count", 0, 1, keyed=False)
    assert not marker.exists()  # nothing of theirs was unpickled


def test_only_files_written_under_the_key_by_their_own_task_are_read(tmp_path):
    storage = CheckpointStorage(str(tmp_path / "root"), "t", KEY)
    storage.save("0001", "count", 1, pickle.dumps({"a": 1}))
    storage.save("0001", "count", 2, pickle.dumps({"b": 2}))
    assert storage.load("0001", "count", 1) == pickle.dumps({"a": 1})
    one, two = storage.path("0001", "count", 1), storage.path("0001", "count", 2)
    assert stat.S_IMODE(one.stat().st_mode) == 0o600
    two.write_bytes(one.read_bytes())  # task 1's file in task 2's place
    with pytest.raises(CheckpointError, match=r"count.*task 2.*not written under this "
                                              "topology's checkpoint key"):
        storage.load("0001", "count", 2)
    altered = bytearray(one.read_bytes())
    altered[-1] ^= 1
    one.write_bytes(bytes(altered))
    with pytest.raises(CheckpointError, match="checkpoint key"):
        storage.load("0001", "count", 1)
    other_key = CheckpointStorage(str(tmp_path / "root"), "t", b"d" * 32)
    storage.save("0002", "count", 1, b"x")
    with pytest.raises(CheckpointError, match="checkpoint key"):
        other_key.load("0002", "count", 1)
    # A link in place of a folder, and a folder others may write, are refused too.
    (tmp_path / "root" / "t" / "0003").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(CheckpointError, match="is not a folder"):
        storage.save("0003", "count", 1, b"x")
    os.chmod(tmp_path / "root" / "t" / "0002", 0o777)
    with pytest.raises(CheckpointError, match="writable by others"):
        storage.load("0002", "count", 1)


@pytest.mark.integration
def test_a_corrupt_newest_checkpoint_is_passed_over_once(home, state, tmp_path):
    lines = 12000
    topology = plan(tmp_path, lines, **{"topology.stateful.checkpoint.interval.secs": 3.0,
                                        "test.interval": 0.002})
    victim = TaskLayout.of(topology).component_tasks["count"][0]
    with Running(topology, home, state) as running:
        def consistent():
            node = state.get(STATEFUL_CHECKPOINTS, "stateful")
            return list(node.checkpoint_ids) if node is not None else []

        wait_until(lambda: len(consistent()) >= 2, 90, "two consistent checkpoints",
                   on_timeout=running.logs)
        seen = consistent()[0]
        newest = wait_until(lambda: consistent()[0] != seen and consistent()[0], 30,
                            "a new checkpoint")
        # Right after it completed (the next is 3 s away): corrupt it, kill a counter.
        for path in (tmp_path / "checkpoints" / "stateful" / newest).rglob("*"):
            if path.is_file():
                data = bytearray(path.read_bytes())
                data[-1] ^= 0xFF
                path.write_bytes(bytes(data))
        pid = int(next(line for line in running.logs().splitlines()
                       if f"task {victim}: started" in line).split("pid ")[1].rstrip(")"))
        os.kill(pid, signal.SIGKILL)
        want = expected_counts(lines)
        wait_until(lambda: counts(tmp_path) == want, 120, "exact counts", interval=0.2,
                   on_timeout=lambda: f"{counts(tmp_path)} != {want}\n" + running.logs())
        time.sleep(0.5)
        logs = running.logs()
    assert "not written under this topology's checkpoint key" in logs, logs
    assert f"could not restore checkpoint {newest}" in logs, logs
    # passed over at once, not retried:
    assert logs.count(f"topology 'stateful': rolling back to {newest}") == 1, logs


def test_a_save_that_fails_leaves_no_part_behind(tmp_path, monkeypatch):
    storage = CheckpointStorage(str(tmp_path / "root"), "t", KEY)
    storage.save("0001", "count", 1, b"first")

    def full(fd, *_):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(CheckpointError, match="No space left on device"):
        storage.save("0002", "count", 1, b"second")
    monkeypatch.undo()
    assert [p.name for p in storage.path("0002", "count", 1).parent.iterdir()] == []
    assert storage.load("0001", "count", 1) == b"first"
