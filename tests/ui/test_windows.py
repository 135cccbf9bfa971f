"""The tracker's history and Storm's windows, without processes: points kept at three
resolutions, a window's counts as the latest minus the point at its start, Storm's
formatting."""

from __future__ import annotations

from heronbridge.runtime.proto import control_pb2
from heronbridge.ui.history import TIERS, History
from heronbridge.ui.stats import WIDTH, report_rows, task_stats, window_seconds
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
