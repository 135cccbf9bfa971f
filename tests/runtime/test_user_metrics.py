"""A component's own metrics (runtime.api.metrics): counters and gauges, heronpy's
IMetrics read every time bucket, names checked and bounded."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest
from heronpy.api.metrics import CountMetric, MeanReducedMetric, MultiCountMetric

from heronbridge.runtime.api.metrics import MAX_NAMES, Metrics
from heronbridge.runtime.errors import ComponentError
from heronbridge.shims.heronpy import HeronpyError
from heronbridge.shims.heronpy.context import HeronpyContext


def exported(m: Metrics) -> tuple[dict, dict]:
    counters: dict[str, float] = {"execute-count": 5.0}
    gauges: dict[str, float] = {}
    m.export(counters, gauges)
    return counters, gauges


def test_counters_add_and_gauges_keep_the_latest():
    m = Metrics("topology 't', component 'c', task 3")
    m.count("words")
    m.count("words", 2.5)
    m.gauge("queue", 7)
    m.gauge("queue", 4)
    counters, gauges = exported(m)
    assert counters == {"execute-count": 5.0, "user/words": 3.5}
    assert gauges == {"user/queue": 4.0}


def test_bad_names_values_and_too_many_names_are_refused_with_the_task():
    m = Metrics("topology 't', component 'c', task 3")
    for bad in ("", "1st", "with space", "x" * 101):
        with pytest.raises(ComponentError, match="task 3.*metric name"):
            m.count(bad)
    with pytest.raises(ComponentError, match="expected a number, received 'many'"):
        m.gauge("n", "many")
    for i in range(MAX_NAMES):
        m.count(f"m{i}")
    with pytest.raises(ComponentError, match=f"at most {MAX_NAMES}"):
        m.count("one_more")
    m.count("m0")  # a name it has is still counted


def test_heronpy_register_metric_is_read_every_bucket(monkeypatch):
    runtime = SimpleNamespace(metrics=Metrics("topology 't', component 'c', task 3"))
    context = HeronpyContext(runtime, {}, "topology 't', component 'c', task 3")
    count, multi, mean = CountMetric(), MultiCountMetric(), MeanReducedMetric()
    context.register_metric("tuples", count, 1)
    context.register_metric("by_word", multi, 1)
    context.register_metric("size", mean, 1)
    count.incr(3)
    multi.incr("a", 2)
    mean.update(4)
    mean.update(6)
    assert exported(runtime.metrics) == ({"execute-count": 5.0}, {})  # not due yet
    now = time.monotonic()
    monkeypatch.setattr(time, "monotonic", lambda: now + 1.5)
    counters, gauges = exported(runtime.metrics)
    assert counters["user/tuples"] == 3 and counters["user/by_word/a"] == 2
    assert gauges == {"user/size": 5.0}
    count.incr(2)
    monkeypatch.setattr(time, "monotonic", lambda: now + 3.0)
    counters, _ = exported(runtime.metrics)
    assert counters["user/tuples"] == 5  # summed over buckets: a counter
    with pytest.raises(HeronpyError, match="IMetric"):
        context.register_metric("bad", object(), 1)
