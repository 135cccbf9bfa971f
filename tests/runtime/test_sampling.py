"""Event sampling (Storm's debug): the share of emits a task writes, one line per emit
whatever its copies, what a line says, and nothing taken while sampling is off."""

from __future__ import annotations

import json

from rt_components import KeySpout, RecordingBolt

from heronbridge.runtime import Grouping, TopologyBuilder
from heronbridge.runtime.instance.emitter import SpoutEmitter, stream_table
from heronbridge.runtime.plan import TaskLayout
from heronbridge.runtime.sampling import MAX_VALUE_CHARS, Sampler, events_path
from heronbridge.runtime.wire.serde import make_serializer


def spout_emitter(grouping: Grouping, acking: bool = False) -> tuple[SpoutEmitter, dict]:
    b = TopologyBuilder("sampled")
    b.spout("src", KeySpout)
    b.bolt("sink", RecordingBolt, inputs={"src": grouping}, par=3)
    plan = b.build()
    task = TaskLayout.of(plan).component_tasks["src"][0]
    streams = {i: s for i, (c, s, _) in enumerate(stream_table(plan)) if c == "src"}
    return SpoutEmitter(plan, task, make_serializer("msgpack"), acking, frozenset(),
                        seed=3), streams


def sampler(tmp_path, streams: dict, percent: float) -> Sampler:
    return Sampler("src", 1, percent, streams, max_bytes=1 << 20, folder=str(tmp_path), seed=5)


def lines(tmp_path) -> list[dict]:
    path = events_path(tmp_path, 1, "src")
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_share_of_the_emits_is_written_one_line_each(tmp_path):
    em, streams = spout_emitter(Grouping.SHUFFLE)
    em.sampler = sampler(tmp_path, streams, 10)
    for i in range(5000):
        em.emit([f"k{i}", i])
        if i % 100 == 99:
            em.flush()
    em.sampler.flush()
    found = lines(tmp_path)
    assert 400 <= len(found) <= 600, len(found)  # 10% of 5000, give or take the draw
    assert len({e["values"][1] for e in found}) == len(found)
    e = found[0]
    assert set(e) == {"ts", "component", "task", "stream", "tasks", "root", "values"}
    assert (e["component"], e["task"], e["stream"], e["root"]) == ("src", 1, "default", 0)
    assert len(e["tasks"]) == 1 and e["values"][0] == f"k{e['values'][1]}"


def test_a_tuple_sent_to_every_task_is_one_event_naming_them_and_its_tree(tmp_path):
    em, streams = spout_emitter(Grouping.ALL, acking=True)
    em.sampler = sampler(tmp_path, streams, 100)
    for i in range(20):
        em.emit(["k", i], msg_id=i)
    em.flush()
    em.sampler.flush()
    found = lines(tmp_path)
    assert [e["values"][1] for e in found] == list(range(20))
    assert all(len(e["tasks"]) == 3 and e["root"] > 0 for e in found)


def test_no_sampler_no_file_and_a_stopped_one_stops(tmp_path):
    em, streams = spout_emitter(Grouping.SHUFFLE)
    em.emit(["k", 0])
    em.flush()
    assert not events_path(tmp_path, 1, "src").exists()
    em.sampler = s = sampler(tmp_path, streams, 100)
    em.emit(["k", 1])
    em.flush()
    s.close()
    em.sampler = None
    em.emit(["k", 2])
    em.flush()
    assert [e["values"] for e in lines(tmp_path)] == [["k", 1]]
    assert oct(events_path(tmp_path, 1, "src").stat().st_mode & 0o777) == "0o600"


def test_long_and_odd_values_are_cut_and_shown(tmp_path):
    em, streams = spout_emitter(Grouping.SHUFFLE)
    em.sampler = sampler(tmp_path, streams, 100)
    em.emit(["x" * 5000, 1])
    em.emit([b"\x00bytes", None])
    em.flush()
    em.sampler.flush()
    first, second = lines(tmp_path)
    assert first["values"][0] == "x" * MAX_VALUE_CHARS + "..."
    assert second["values"] == ["b'\\x00bytes'", None]


def test_the_file_rotates_at_its_size(tmp_path):
    em, streams = spout_emitter(Grouping.SHUFFLE)
    em.sampler = Sampler("src", 1, 100, streams, max_bytes=4096, folder=str(tmp_path))
    for i in range(400):
        em.emit(["k" * 50, i])
        em.flush()
        em.sampler.flush()
    path = events_path(tmp_path, 1, "src")
    assert path.stat().st_size <= 4096
    assert path.with_name(path.name + ".1").exists()
    assert lines(tmp_path)[-1]["values"][1] == 399
