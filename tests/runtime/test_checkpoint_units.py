"""Checkpoint storage, marker alignment and the state a task restores after an update."""

from __future__ import annotations

import pickle
import stat

import pytest

from heronbridge.runtime.checkpoint import Aligner, CheckpointStorage
from heronbridge.runtime.checkpoint.partitions import key_partition, restored_state
from heronbridge.runtime.errors import CheckpointError

KEY = b"k" * 32


def test_storage_layout_is_herons_and_owner_only(tmp_path):
    storage = CheckpointStorage(str(tmp_path / "no" / "such" / "root"), "t", KEY)
    storage.save("0001", "count", 3, b"state")
    path = tmp_path / "no" / "such" / "root" / "t" / "0001" / "count" / "3"
    assert path.read_bytes().endswith(b"state") and storage.load("0001", "count", 3) == b"state"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert storage.load("0001", "count", 4) is None
    storage.save("0002", "count", 3, b"x")
    storage.save("0003", "count", 3, b"y")
    assert storage.dispose({"0002"}, "0003") == ["0001"]
    assert storage.checkpoints() == ["0002", "0003"]


def test_alignment_holds_inputs_past_their_marker_then_releases_them():
    aligner = Aligner(frozenset({1, 2}), 1 << 20, "here")
    assert aligner.marker(1, "c1") == (None, [])
    assert aligner.holding and aligner.arrived == {1}
    assert aligner.hold(b"after-1") == (None, [])
    done, release = aligner.marker(2, "c1")
    assert done == "c1" and release == [b"after-1"]
    assert not aligner.holding
    assert aligner.marker(1, "c1") == (None, [])  # late: already done


def test_a_newer_marker_or_too_much_held_gives_the_checkpoint_up():
    aligner = Aligner(frozenset({1, 2}), 10, "here")
    aligner.marker(1, "c1")
    aligner.hold(b"12345")
    done, release = aligner.marker(1, "c2")  # c1 never completed
    assert done is None and release == [b"12345"] and aligner.checkpoint == "c2"
    # past 10 bytes: given up
    assert aligner.hold(b"123456789012") == ("c2", [b"123456789012"])
    assert aligner.marker(2, "c2") == (None, [])  # c2 is over


def save(storage, checkpoint, tasks_states):
    for task, state in tasks_states.items():
        storage.save(checkpoint, "count", task, pickle.dumps(state))


def test_a_task_finds_its_state_by_index_when_ids_shift(tmp_path):
    storage = CheckpointStorage(str(tmp_path), "t", KEY)
    save(storage, "c", {3: {"a": 1}, 4: {"b": 2}})
    assert restored_state(storage, "c", "count", 1, 2, keyed=False) == {"b": 2}
    assert restored_state(storage, "c", "sink", 0, 1, keyed=False) is None


def test_a_new_parallelism_repartitions_by_the_fields_groupings_key(tmp_path):
    storage = CheckpointStorage(str(tmp_path), "t", KEY)
    words = {f"w{i}": i for i in range(200)}
    save(storage, "c", {1: dict(list(words.items())[:100]), 2: dict(list(words.items())[100:])})
    parts = [restored_state(storage, "c", "count", i, 3, keyed=True) for i in range(3)]
    assert {k: v for part in parts for k, v in part.items()} == words
    for i, part in enumerate(parts):
        assert part and all(key_partition(k, 3) == i for k in part)
    with pytest.raises(CheckpointError, match=r"holds the state of 2 tasks and the component "
                                              r"now has 3; expected its inputs to be "
                                              r"fields-grouped"):
        restored_state(storage, "c", "count", 0, 3, keyed=False)


def test_tasks_commit_and_rollbacks_restore_only_recorded_checkpoints(tmp_path):
    """The tasks' post_save (where a Kafka transaction commits) and a rollback's source
    wait for the state manager to hold the checkpoint's id: a master killed before it is
    written comes back to the older one, which the tasks must not have committed past."""
    from heronbridge.runtime.checkpoint import CheckpointCoordinator
    from heronbridge.runtime.proto import control_pb2

    sent, writes = [], []
    coordinator = CheckpointCoordinator(
        "t", 60.0, 2, CheckpointStorage(str(tmp_path), "t", KEY), ["0001"], sent.append,
        lambda message, then=None: writes.append((list(message.checkpoint_ids), then)))
    coordinator.tasks, coordinator.stmgrs = {1, 2}, {"stmgr-1"}
    coordinator.started()
    coordinator._start_rollback()
    coordinator.stmgr_restored(control_pb2.StreamManagerRestored(
        stmgr_id="stmgr-1", txid=coordinator.txid, ok=True))
    checkpoint_id = coordinator._start_round(0.0)
    for task in (1, 2):
        coordinator.state_stored(control_pb2.InstanceStateStored(
            checkpoint_id=checkpoint_id, task_id=task, state_bytes=1))
    assert [ids for ids, _ in writes] == [[checkpoint_id, "0001"]]

    def told_complete():
        return [list(m.checkpoint_ids) for m in sent
                if isinstance(m, control_pb2.ConsistentCheckpoints)]

    assert told_complete() == []  # not recorded yet: no task may commit
    coordinator.rollback("a stream manager lost a task", settle=False)
    coordinator._start_rollback()
    restores = [m for m in sent if isinstance(m, control_pb2.RestoreState)]
    assert restores[-1].checkpoint_id == "0001"  # what a restarted master would restore

    writes[0][1]()  # the state manager wrote it
    assert told_complete() == [[checkpoint_id, "0001"]]
    coordinator.rollback("another loss", settle=False)
    coordinator._start_rollback()
    restores = [m for m in sent if isinstance(m, control_pb2.RestoreState)]
    assert restores[-1].checkpoint_id == checkpoint_id


def test_a_checkpoint_slower_than_the_interval_completes_before_the_next_starts(
        tmp_path, monkeypatch):
    """Under load a checkpoint can take longer than a short interval: it is not replaced
    at the next interval (else none would ever complete, and state that grows until one
    does, a transactional sink's records, would grow for ever), only after
    ROUND_TIMEOUT_SECS; the next starts once it completes."""
    import asyncio

    from heronbridge.runtime.checkpoint import CheckpointCoordinator
    from heronbridge.runtime.checkpoint import coordinator as module
    from heronbridge.runtime.proto import control_pb2

    clock = [1000.0]
    monkeypatch.setattr(module.time, "monotonic", lambda: clock[0])
    sent: list = []
    coordinator = CheckpointCoordinator(
        "t", 1.0, 2, CheckpointStorage(str(tmp_path), "t", KEY), [], sent.append,
        lambda message, then=None: then and then())
    coordinator.tasks, coordinator.stmgrs = {1, 2}, {"stmgr-1"}
    coordinator.started()
    coordinator._start_rollback()
    coordinator.stmgr_restored(control_pb2.StreamManagerRestored(
        stmgr_id="stmgr-1", txid=coordinator.txid, ok=True))

    def started() -> list[str]:
        return [m.checkpoint_id for m in sent if isinstance(m, control_pb2.StartCheckpoint)]

    def at(secs: float) -> None:
        clock[0] = 1000.0 + secs
        asyncio.run(coordinator.tick())

    at(1.0)
    first = started()
    assert len(first) == 1
    coordinator.state_stored(control_pb2.InstanceStateStored(
        checkpoint_id=first[0], task_id=1, state_bytes=1))
    at(2.5)  # an interval later, half stored: it goes on
    assert started() == first and coordinator.counts["checkpoints-given-up"] == 0
    coordinator.state_stored(control_pb2.InstanceStateStored(
        checkpoint_id=first[0], task_id=2, state_bytes=1))
    assert coordinator.consistent == first
    at(3.0)  # complete, and past the interval: the next starts at once
    second = started()[1:]
    assert len(second) == 1
    at(3.0 + module.ROUND_TIMEOUT_SECS - 0.5)
    assert started()[1:] == second
    at(3.0 + module.ROUND_TIMEOUT_SECS + 0.5)  # never completed: given up, another starts
    assert len(started()) == 3 and coordinator.counts["checkpoints-given-up"] == 1
    third = started()[2]
    at(3.0 + module.ROUND_TIMEOUT_SECS + 1.0)
    coordinator.state_stored(control_pb2.InstanceStateStored(  # its alignment overflowed
        checkpoint_id=third, task_id=2, given_up=True))
    assert coordinator.counts["checkpoints-given-up"] == 2
    coordinator.state_stored(control_pb2.InstanceStateStored(  # too late to complete it
        checkpoint_id=third, task_id=1, state_bytes=1))
    assert coordinator.consistent == first
    at(3.0 + module.ROUND_TIMEOUT_SECS + 1.6)  # the next at its interval, not in a minute
    assert len(started()) == 4
