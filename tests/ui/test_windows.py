"""The tracker's history and Storm's windows, without processes: points kept at three
resolutions, a window's counts as the latest minus the point at its start, Storm's
formatting."""

from __future__ import annotations

from heronbridge.runtime.proto import control_pb2
from heronbridge.ui.history import TIERS, History
from heronbridge.ui.stats import (
    WIDTH,
    report_latencies,
    report_rows,
    task_stats,
    window_seconds,
)
from heronbridge.ui.storm_api import float_str, pretty_uptime, window_hint


def report(executed: float, exec_ns: float = 0.0, incarnation: int = 0):
    r = control_pb2.MetricsReport(all_ready=True)
    r.tasks.add(component="work", task_id=3, container=0, incarnation=incarnation,
                counters={"execute-count": executed, "execute-time-ns": exec_ns})
    return r


def test_points_are_kept_at_three_resolutions_and_bounded():
    h = History(WIDTH)
    start = 1_000_000.0
    for i in range(26 * 3600 // 3):  # 26 hours, a sample every 3 s
        h.append(start + 3 * i, report_rows(report(float(i))))
    now = start + 3 * (26 * 3600 // 3 - 1)
    fine, minute, five = h.tiers
    assert now - fine[0].ts <= TIERS[0][0] and len(fine) == TIERS[0][0] // 3 + 1
    assert all(b.ts - a.ts >= 60 for a, b in zip(minute, list(minute)[1:], strict=False))
    assert now - five[0].ts <= TIERS[2][0] and len(five) <= TIERS[2][0] // 300 + 1
    assert h.size() < 800  # bounded, whatever the uptime
    assert now - 600 - 3 < h.at(now - 600).ts <= now - 600  # from the every-sample tier
    assert now - 10800 - 60 < h.at(now - 10800).ts <= now - 10800  # the per-minute tier
    assert now - 86400 - 300 < h.at(now - 86400).ts <= now - 86400
    assert h.at(start - 5).ts == h.oldest().ts  # before the history began


def test_a_window_counts_what_happened_in_it():
    h = History(WIDTH)
    for t, n in ((0.0, 0), (100.0, 1000), (400.0, 4000), (700.0, 7000)):
        h.append(t, report_rows(report(n, n * 1e6)))
    latest = report(7000, 7000 * 1e6)
    [all_time] = task_stats(latest, h, uptime=700.0, window=None, now=700.0, spouts=set())
    assert all_time.executed == 7000 and all_time.seconds == 700
    [last_600] = task_stats(latest, h, uptime=700.0, window=600.0, now=700.0, spouts=set())
    assert last_600.executed == 6000 and last_600.seconds == 600  # since the point at 100
    assert last_600.execute_ms == 1.0 and last_600.capacity == 6000 * 1e6 / (600 * 1e9)
    [young] = task_stats(latest, h, uptime=700.0, window=10800.0, now=700.0, spouts=set())
    assert young.executed == 7000  # the topology is younger than the window
    reset = report(50, 50e6, incarnation=0)  # counters restarted (a new metrics manager)
    [after] = task_stats(reset, h, uptime=800.0, window=600.0, now=800.0, spouts=set())
    assert after.executed == 50


def test_storm_formats():
    assert pretty_uptime(600) == "10m 0s" and pretty_uptime(59) == "59s"
    assert pretty_uptime(86400) == "1d 0h 0m 0s" and pretty_uptime(0) == ""
    assert window_hint(":all-time") == "All time" and window_hint("10800") == "3h 0m 0s"
    assert float_str(None) == "0" and float_str(1.23456) == "1.235"
    assert window_seconds(":all-time") is None and window_seconds("60") == 60.0
    assert window_seconds("bogus") is None


def test_charts_show_rates_latencies_and_markers_per_interval():
    from pathlib import Path

    from conftest import plan

    from heronbridge.runtime.health.actions import Action
    from heronbridge.runtime.telemetry import Histogram
    from heronbridge.ui.series import series
    from heronbridge.ui.tracker import Nodes, Topology

    def sample(n: int, slow: bool, rss: float) -> control_pb2.MetricsReport:
        r = control_pb2.MetricsReport(all_ready=True)
        spout = r.tasks.add(component="numbers", task_id=1, container=0,
                            counters={"emit-count": 100.0 * n}, gauges={"rss-bytes": rss})
        hist = Histogram()
        for i in range(n):  # 100 tuples a second: 1 ms each, then 64 ms each when slow
            for _ in range(100):
                hist.add(0.064 if slow and i == n - 1 else 0.001)
        spout.histograms["complete-latency"].counts.extend(hist.counts)
        exec_ms = 1.0 * n + (19.0 if slow else 0.0)
        r.tasks.add(component="work", task_id=2, container=0, incarnation=1 if slow else 0,
                    counters={"execute-count": 100.0 * n, "execute-time-ns": exec_ms * 1e8})
        return r

    t = Topology("shown", Nodes(actions=[Action("restart", "slow", "work", 2, "", "", 1003.5)]),
                 plan("shown", Path("/nonexistent")))
    t.updates = ((1002.5, "packing-2"),)
    for n in range(1, 5):
        r = sample(n, slow=(n == 4), rss=2**20 * n)
        t.history.append(1000.0 + n, report_rows(r), report_latencies(r))
    found = series(t, "900", now=1004.0)
    assert found["times"] == [1002.0, 1003.0, 1004.0]
    work, numbers = found["lines"]["work"], found["lines"]["numbers"]
    assert numbers["emitted"] == [100.0, 100.0, 100.0]
    assert work["executed"] == [100.0, 100.0, 100.0]
    assert work["execute_ms"] == [1.0, 1.0, 20.0]  # the spike
    assert work["capacity"] == [0.1, 0.1, 2.0]
    assert work["restarts"] == [0, 0, 1]
    assert numbers["memory_mb"] == [2.0, 3.0, 4.0]
    p50, p99 = numbers["complete_p50_ms"], numbers["complete_p99_ms"]
    assert 0.9 < p50[0] < 1.2 and 0.9 < p99[0] < 1.2
    assert 60 < p50[2] < 70 and 60 < p99[2] < 70  # only the slow interval's tuples
    assert [(e["kind"], e["time"]) for e in found["events"]] == \
        [("update", 1002.5), ("health", 1003.5)]
    one = series(t, "900", now=1004.0, task=2)
    assert list(one["lines"]) == ["task 2"] and one["lines"]["task 2"]["execute_ms"][2] == 20.0
    assert [m["unit"] for m in found["metrics"]][:3] == ["tuples/s", "tuples/s", "ms"]

