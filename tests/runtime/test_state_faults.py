"""The local state survives crashes (each node reaches the disk before it replaces the
old one), and a corrupt node neither breaks `list` nor survives `kill`."""

from __future__ import annotations

import os

from heronbridge.cli import main
from heronbridge.runtime.proto import plans_pb2, topology_pb2
from heronbridge.runtime.state import (
    PACKING_PLANS,
    SCHEDULERS,
    TOPOLOGIES,
    LocalFileStateManager,
    localfs,
)


def test_a_node_is_synced_to_disk_before_and_after_it_replaces_the_old_one(tmp_path,
                                                                          monkeypatch):
    state = LocalFileStateManager(tmp_path)
    events: list[tuple[str, str]] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        events.append(("fsync", os.readlink(f"/proc/self/fd/{fd}")))
        real_fsync(fd)

    def replace(src: str, dst: str) -> None:
        events.append(("replace", str(dst)))
        real_replace(src, dst)

    monkeypatch.setattr(localfs.os, "fsync", fsync)
    monkeypatch.setattr(localfs.os, "replace", replace)
    state.put(TOPOLOGIES, "wc", topology_pb2.Topology(id="wc-1"))
    node, folder = tmp_path / "topologies" / "wc", str(tmp_path / "topologies")
    [(first, temp), second, third] = events
    assert first == "fsync" and os.path.dirname(temp) == folder  # the new file's data ...
    assert second == ("replace", str(node))  # ... then its new name ...
    assert third == ("fsync", folder)  # ... then the folder's entry
    assert state.get(TOPOLOGIES, "wc").id == "wc-1"
    assert [p.name for p in node.parent.iterdir()] == ["wc"]  # no temporary file left
    events.clear()
    state.delete(TOPOLOGIES, "wc")
    assert events == [("fsync", folder)]


def test_list_shows_a_corrupt_node_and_kill_removes_it(tmp_path, capsys):
    home = tmp_path / "hb"
    state = LocalFileStateManager(home / "state")
    state.put(TOPOLOGIES, "good", topology_pb2.Topology(id="good-1", name="good"))
    state.put(PACKING_PLANS, "good", plans_pb2.PackingPlan(id="good-packing"))
    state.put(TOPOLOGIES, "bad", topology_pb2.Topology(id="bad-1", name="bad"))
    state.put(SCHEDULERS, "bad", plans_pb2.SchedulerLocation(topology_name="bad", pid=1))
    (home / "state" / PACKING_PLANS / "bad").write_bytes(b"\xff\xff\xff")  # cut short
    (home / "state" / SCHEDULERS / "bad").write_bytes(b"\x0a\xff")

    assert main(["list", "--home", str(home)]) == 0
    text = capsys.readouterr().out
    assert "good-1" in text  # the other topology is still listed
    bad = text[text.index("bad"):]
    assert "CORRUPT" in bad and "heronbridge kill bad" in bad

    assert main(["kill", "bad", "--home", str(home)]) == 0
    assert "corrupt" in capsys.readouterr().out
    assert all(state.names(kind) == (["good"] if kind in (TOPOLOGIES, PACKING_PLANS) else [])
               for kind in (TOPOLOGIES, PACKING_PLANS, SCHEDULERS))
    assert main(["list", "--home", str(home)]) == 0
    assert "CORRUPT" not in capsys.readouterr().out
