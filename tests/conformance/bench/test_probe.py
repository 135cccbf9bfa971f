"""The probe: what it counts, how it paces a spout, what it writes."""

from __future__ import annotations

import json
import time

import pytest

from heronbridge.conformance.bench import BenchError
from heronbridge.conformance.bench.probe import DIR_OPTION, RATE_FILE, Probe


def handshake(component: str, task: int, spout: bool, conf: dict | None = None) -> dict:
    sources = {} if spout else {"words": {"default": {"type": "SHUFFLE"}}}
    return {"pidDir": "/tmp", "conf": conf or {},
            "context": {"componentid": component, "taskid": task,
                        "task->component": {"1": "words", "2": "count", "3": "count"},
                        "source->stream->grouping": sources}}


def lines(folder) -> list[dict]:
    return [json.loads(line) for path in sorted(folder.glob("*.jsonl"))
            for line in path.read_text().splitlines()]


def test_a_spout_probe_times_each_tree_from_emit_to_ack(tmp_path):
    probe = Probe({DIR_OPTION: str(tmp_path)})
    assert probe.down(handshake("words", 1, spout=True)) == ([handshake("words", 1, True)], [])
    probe.down({"command": "next"})
    probe.up({"command": "emit", "tuple": ["a"], "id": 7})
    probe.up({"command": "emit", "tuple": ["b"], "id": [1, 2]})  # JSON keeps lists
    time.sleep(0.01)
    probe.down({"command": "ack", "id": 7})
    probe.down({"command": "fail", "id": [1, 2]})
    probe.close()
    start, line = lines(tmp_path)
    assert start["component"] == "words" and start["spout"] is True
    assert (line["emit"], line["ack"], line["fail"]) == (2, 1, 1)
    assert sum(line["lat"]) == 1  # one latency: the acked tree
    assert not probe.sent  # nothing left waiting


def test_a_bolt_probe_counts_input_tuples_but_not_heartbeats_or_ticks(tmp_path):
    probe = Probe({DIR_OPTION: str(tmp_path)})
    probe.down(handshake("count", 2, spout=False))
    for i in range(5):
        probe.down({"id": str(i), "comp": "words", "stream": "default", "task": 1,
                    "tuple": ["x"]})
    probe.down({"id": "-1", "comp": "__system", "stream": "__heartbeat", "task": -1,
                "tuple": []})
    probe.down({"id": "t", "comp": "__system", "stream": "__tick", "task": -1, "tuple": [1]})
    probe.down([2, 3])  # task ids answering an emit pass untouched
    probe.close()
    assert lines(tmp_path)[-1]["in"] == 5


def test_a_paced_spout_gets_sync_for_an_early_next_and_keeps_the_rate(tmp_path):
    (tmp_path / RATE_FILE).write_text("200\n")  # tuples/s for the component
    probe = Probe({DIR_OPTION: str(tmp_path)})
    probe.down(handshake("words", 1, spout=True))
    probe._read_rate(time.monotonic())
    emitted, began = 0, time.monotonic()
    while time.monotonic() - began < 0.5:
        mine, back = probe.down({"command": "next"})
        if mine:
            probe.up({"command": "emit", "tuple": ["w"]})
            emitted += 1
        else:
            assert back == [{"command": "sync"}]  # answered for the component
    assert 80 <= emitted <= 110  # 200/s for half a second


def test_the_probe_refuses_to_run_without_its_folder():
    with pytest.raises(BenchError, match="component 'count', task 2.*heronbridge.bench.dir"):
        Probe().down(handshake("count", 2, spout=False))
