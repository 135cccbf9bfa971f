"""Tick tuples, and max spout pending enforced per spout task."""

from __future__ import annotations

import time

import pytest
from rt_components import KeySpout, NeverAckBolt, TickRecorder
from testkit import read_jsonl, wait_until

from heronbridge.runtime import TopologyBuilder
from heronbridge.runtime.plan import TaskLayout

pytestmark = pytest.mark.integration


@pytest.mark.compat("api/tick tuples", "config/topology.tick.tuple.freq.secs")
def test_ticks_arrive_at_the_configured_frequency_on_system_tick(run_topology, tmp_path):
    b = TopologyBuilder("ticks", {"test.out": str(tmp_path), "test.count": 0,
                                  "topology.tick.tuple.freq.secs": 1})
    b.spout("keys", KeySpout)
    b.bolt("every_second", TickRecorder, inputs=["keys"])
    b.bolt("twice_a_second", TickRecorder, inputs=["keys"],
           config={"topology.tick.tuple.freq.secs": 0.5})
    plan = b.build()
    tasks = TaskLayout.of(plan).component_tasks
    fast_log = f"ticks-twice_a_second-{tasks['twice_a_second'][0]}"
    slow_log = f"ticks-every_second-{tasks['every_second'][0]}"
    with run_topology(plan) as running:
        started = time.monotonic()
        wait_until(lambda: len(read_jsonl(tmp_path).get(fast_log, [])) >= 6, 20, "six ticks",
                   on_timeout=running.logs)
        elapsed = time.monotonic() - started
        ticks = read_jsonl(tmp_path)
    fast, slow = ticks[fast_log], ticks[slow_log]
    assert all(t == {"component": "__system", "stream": "__tick", "task": -1,
                     "values": [0.5]} for t in fast)
    assert all(t["values"] == [1] for t in slow)
    assert len(slow) <= len(fast) / 2 + 1
    assert len(fast) <= 2 * elapsed + 3  # no faster than configured


@pytest.mark.compat("api/max spout pending", "config/topology.max.spout.pending")
def test_max_spout_pending_caps_tuples_in_flight_per_spout_task(run_topology, tmp_path):
    b = TopologyBuilder("pending", {
        "topology.reliability.mode": "ATLEAST_ONCE", "topology.max.spout.pending": 7,
        "topology.message.timeout.secs": 300, "test.out": str(tmp_path), "test.count": 1000,
        "heronbridge.metrics.interval.secs": 0.2})
    b.spout("keys", KeySpout, par=2)
    b.bolt("sink", NeverAckBolt, inputs=["keys"])
    with run_topology(b.build()) as running:
        wait_until(lambda: running.metrics()["keys"].get("emit-count") == 14, 20,
                   "each spout task to fill its window", on_timeout=running.logs)
        time.sleep(1.0)
        emitted = running.metrics()["keys"]["emit-count"]
    assert emitted == 14
    per_task = {name: sum(r["event"] == "emit" for r in rows)
                for name, rows in read_jsonl(tmp_path, "spout-*.jsonl").items()}
    assert sorted(per_task.values()) == [7, 7]
