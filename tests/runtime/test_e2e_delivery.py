"""At-most-once and at-least-once delivery, with real processes."""

from __future__ import annotations

import time

import pytest
from rt_components import FailEveryNthBolt, KeySpout, NeverAckBolt
from testkit import read_jsonl, wait_until

from heronbridge.runtime import TopologyBuilder
from heronbridge.runtime.statemgr import PHYSICAL_PLANS

pytestmark = pytest.mark.integration

COUNT = 200


def topology(name, bolt, out, mode, **conf):
    b = TopologyBuilder(name, {"topology.reliability.mode": mode, "test.out": str(out),
                               "test.count": COUNT, "topology.stmgrs": 2, **conf})
    b.spout("keys", KeySpout)
    b.bolt("judge", bolt, inputs=["keys"], par=2)
    return b.build()


def callbacks(out):
    events = read_jsonl(out, "spout-*.jsonl")
    rows = [r for rs in events.values() for r in rs]
    return ({r["seq"] for r in rows if r["event"] == "ack"},
            {r["seq"] for r in rows if r["event"] == "fail"},
            [r["seq"] for r in rows if r["event"] in ("ack", "fail")])


def test_at_least_once_the_spout_sees_exactly_the_failed_tuples_fail(run_topology, tmp_path):
    plan = topology("every-tenth", FailEveryNthBolt, tmp_path, "ATLEAST_ONCE",
                    **{"test.fail.every": 10})
    with run_topology(plan) as running:
        wait_until(lambda: len(callbacks(tmp_path)[2]) >= COUNT, 60, "every callback",
                   on_timeout=running.logs)
        wait_until(lambda: running.metrics()["__stmgr__"]["trees-acked"] == COUNT - 20, 10,
                   "the stream managers' counts")
        metrics = running.metrics()
    acked, failed, all_events = callbacks(tmp_path)
    assert failed == {s for s in range(COUNT) if s % 10 == 0}
    assert acked == {s for s in range(COUNT) if s % 10}
    assert len(all_events) == COUNT  # one callback per tuple, never two
    assert metrics["__stmgr__"]["trees-failed"] == 20


@pytest.mark.compat("api/message timeouts", "config/topology.message.timeout.secs")
def test_at_least_once_unacked_tuples_time_out_and_fail(run_topology, tmp_path):
    plan = topology("never-acks", NeverAckBolt, tmp_path, "ATLEAST_ONCE",
                    **{"topology.message.timeout.secs": 2})
    with run_topology(plan) as running:
        wait_until(lambda: len(callbacks(tmp_path)[1]) == COUNT, 30, "every tuple to time out",
                   on_timeout=running.logs)
        wait_until(lambda: running.metrics()["keys"].get("timeout-count") == COUNT, 10,
                   "the timeouts to show in the spout's metrics")
    acked, failed, _ = callbacks(tmp_path)
    assert failed == set(range(COUNT)) and not acked


@pytest.mark.compat("config/topology.enable.message.timeouts", "config/topology.debug",
                    "config/heronbridge.host")
def test_without_message_timeouts_unacked_tuples_never_fail(run_topology, state, tmp_path):
    """With timeouts off a tree that is never acked stays pending, past several of its
    timeouts; with `topology.debug` a bolt's debug lines reach its log; the stream managers
    listen on the address `heronbridge.host` names."""
    plan = topology("never-times-out", NeverAckBolt, tmp_path, "ATLEAST_ONCE",
                    **{"topology.message.timeout.secs": 0.5, "heronbridge.host": "127.0.0.2",
                       "topology.max.spout.pending": COUNT,  # a window nothing acks stays open
                       "topology.enable.message.timeouts": False, "topology.debug": True})
    with run_topology(plan) as running:
        wait_until(lambda: running.metrics()["judge"].get("execute-count") == COUNT, 30,
                   "the bolt to see every tuple", on_timeout=running.logs)
        time.sleep(2.0)  # four timeouts
        metrics = running.metrics()
        hosts = {s.host for s in state.get(PHYSICAL_PLANS, "never-times-out").stmgrs}
        logs = {p.name: p.read_text(errors="replace")
                for p in running.workdir.glob("container-*/logs/task-*.log")}
    acked, failed, _ = callbacks(tmp_path)
    assert not acked and not failed
    assert metrics["keys"].get("timeout-count", 0) == 0
    judges = [text for name, text in logs.items() if name.endswith("-judge.log")]
    assert len(judges) == 2 and all(" DEBUG rt_components: holding " in text for text in judges)
    assert hosts == {"127.0.0.2"}


def test_at_most_once_acks_at_once_and_tracks_nothing(run_topology, tmp_path):
    plan = topology("no-tracking", FailEveryNthBolt, tmp_path, "ATMOST_ONCE",
                    **{"test.fail.every": 10})
    with run_topology(plan) as running:
        wait_until(lambda: len(callbacks(tmp_path)[0]) == COUNT, 30, "every ack",
                   on_timeout=running.logs)
        wait_until(lambda: running.metrics()["judge"].get("execute-count") == COUNT, 10,
                   "the bolt to see every tuple")
        wait_until(lambda: "__stmgr__" in running.metrics(), 10, "stream manager metrics")
        metrics = running.metrics()
    acked, failed, _ = callbacks(tmp_path)
    assert acked == set(range(COUNT)) and not failed  # the bolt's fails do not reach it
    assert metrics["__stmgr__"].get("trees-acked", 0) == 0
    assert metrics["__stmgr__"].get("trees-failed", 0) == 0
