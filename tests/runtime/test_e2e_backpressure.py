"""Backpressure: a bolt 100x slower than its spout throttles the spout, and memory stays
bounded in the stream manager and every instance."""

from __future__ import annotations

import time

import psutil
import pytest
from rt_components import EndlessSpout, SlowBolt
from testkit import wait_until

from heronbridge.runtime import TopologyBuilder
from heronbridge.runtime.instance.emitter import SpoutEmitter
from heronbridge.runtime.plan import TaskLayout
from heronbridge.runtime.wire.serde import make_serializer

pytestmark = [pytest.mark.integration, pytest.mark.solo]

RUN_SECS = 22
RSS_BOUND = 100 << 20  # bytes, for the stream manager and each instance
RSS_GROWTH_BOUND = 10 << 20  # after warm-up
BACKLOG_BOUND = 250_000  # tuples emitted but not yet executed, at most
HIGH, LOW = 256 << 10, 64 << 10


def plan(sleep: float) -> object:
    b = TopologyBuilder("slow-bolt", {
        "heronbridge.backpressure.high.watermark.bytes": HIGH,
        "heronbridge.backpressure.low.watermark.bytes": LOW,
        "heronbridge.metrics.interval.secs": 0.5, "test.sleep": sleep})
    b.spout("fast", EndlessSpout)
    b.bolt("slow", SlowBolt, inputs=["fast"])
    return b.build()


def spout_rate() -> float:
    """Tuples per second the spout produces into its output buffers, on this machine."""
    p = plan(0.0)
    layout = TaskLayout.of(p)
    em = SpoutEmitter(p, layout.component_tasks["fast"][0], make_serializer("msgpack"), False,
                      frozenset())
    spout = EndlessSpout()
    spout.collector = em
    spout.open({}, None, em)
    t0 = time.perf_counter()
    for i in range(200_000):
        spout.next_tuple()
        if i % 256 == 255:
            em.flush()
    return 200_000 / (time.perf_counter() - t0)


def processes(topology_id: str) -> dict[str, psutil.Process]:
    out = {}
    for proc in psutil.process_iter(["cmdline"]):
        cmd = " ".join(proc.info["cmdline"] or [])
        if "heronbridge.runtime.stream_manager" in cmd and "slow-bolt" in proc.info["cmdline"]:
            out["stream manager"] = proc
        elif "heronbridge.runtime.instance" in cmd and topology_id in cmd:
            out["task " + cmd.split("--task ")[1].split()[0]] = proc
    return out


@pytest.mark.compat("config/heronbridge.backpressure.high.watermark.bytes",
                    "config/heronbridge.backpressure.low.watermark.bytes",
                    partly="backpressure starts and ends under the watermarks set; the "
                           "thresholds themselves are not measured")
def test_a_slow_bolt_throttles_the_spout_and_memory_stays_bounded(run_topology, state):
    rate = spout_rate()
    sleep = 100 / rate  # the bolt is 100x slower than the spout
    with run_topology(plan(sleep)) as running:
        topology_id = state.get("topologies", "slow-bolt").id
        procs = wait_until(lambda: len(processes(topology_id)) == 3 and processes(topology_id),
                           10, "the processes")
        rss: dict[str, list[int]] = {name: [] for name in procs}
        start = time.monotonic()
        while time.monotonic() - start < RUN_SECS:
            for name, proc in procs.items():
                rss[name].append(proc.memory_info().rss)
            time.sleep(1)
        m = running.metrics()
        elapsed = time.monotonic() - start
    emitted, executed = m["fast"]["emit-count"], m["slow"]["execute-count"]
    report = (f"spout alone: {rate:,.0f}/s; bolt sleeps {sleep * 1e6:.0f} us/tuple; over "
              f"{elapsed:.0f}s the spout emitted {emitted:,.0f} and the bolt executed "
              f"{executed:,.0f}; backpressure {m['__stmgr__']['backpressure-ms'] / 1000:.1f}s; "
              f"peak RSS MB " + ", ".join(f"{n} {max(v) / 2**20:.0f}" for n, v in rss.items()))
    print(report)
    assert executed > 0, report
    assert emitted - executed < BACKLOG_BOUND, report
    assert emitted < 0.05 * rate * elapsed, report  # unthrottled it would be 20x more
    assert m["__stmgr__"]["backpressure-ms"] > 0.5 * elapsed * 1000, report
    for name, samples in rss.items():
        assert max(samples) < RSS_BOUND, f"{name}: {report}"
        assert samples[-1] - samples[5] < RSS_GROWTH_BOUND, f"{name} grew: {report}"
