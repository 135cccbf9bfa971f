"""The signs of under-provisioning and the bottleneck diagnosis, from sensor views (no
processes): each detector on and off, the upstream-most bolt at capacity, and the
window's figures from metric samples."""

from __future__ import annotations

from heronbridge.runtime.health import HealthConfig
from heronbridge.runtime.health import detectors as d
from heronbridge.runtime.health.diagnosis import (
    bottleneck,
    diagnose_topology,
    scaled_parallelism,
)
from heronbridge.runtime.health.sensors import (
    ComponentView,
    SpoutTaskView,
    SpoutView,
    TaskView,
    Window,
)
from heronbridge.runtime.proto import control_pb2

CONF = HealthConfig.read({}, "t")


def bolt(name: str = "work", *tasks: TaskView) -> ComponentView:
    return ComponentView(name, {t.task: t for t in tasks or (TaskView(9),)})


def spout(*tasks: SpoutTaskView) -> SpoutView:
    return SpoutView("source", {t.task: t for t in tasks})


BUSY = TaskView(3, capacity=0.98, rate=80, intake=8000)
IDLE = TaskView(4, capacity=0.05, rate=2, intake=200)
HELD = spout(SpoutTaskView(1, held=600, emitted=80, acked=80))
FREE = spout(SpoutTaskView(1, held=0, emitted=200, acked=200))
EMPTY = spout(SpoutTaskView(1))


def test_rising_catches_slow_growth_and_not_jitter():
    assert d.rising([0, 10, 30, 50, 80, 95])  # however small
    assert d.rising([100, 300, 150, 400, 250, 500])  # a sawtooth that climbs
    assert not d.rising([0, 900, 0, 40, 0, 700])  # drains now and then: keeps up
    assert not d.rising([500, 500, 500, 500])  # a steady queue
    assert not d.rising([900, 700, 500, 300])
    assert not d.rising([1, 2, 3])  # too few samples to tell


def test_at_capacity():
    assert d.at_capacity(bolt("work", BUSY), CONF) is not None
    assert "task 3 0.98" in d.at_capacity(bolt("work", BUSY), CONF).evidence
    assert d.at_capacity(bolt("work", IDLE), CONF) is None
    assert d.at_capacity(bolt("work", TaskView(3, capacity=0.6)), CONF) is None


def test_queue_growing_and_its_demand():
    growing = TaskView(3, intake=8000, growth=12000, queues=[0, 2e5, 4e5, 6e5])
    symptom = d.queue_growing(bolt("work", growing))
    assert symptom is not None and "0 -> 586 KB" in symptom.evidence
    # 8 KB/s taken, 12 KB/s more arriving: demand 2.5x what is served.
    assert round(symptom.pressure) == 600
    assert d.queue_growing(bolt("work", TaskView(3, queues=[0, 5, 0, 3]))) is None


def test_spout_held_by_its_window():
    held = d.spout_held(HELD, CONF)
    assert held is not None and held.pressure == 600 and "600 ms/s" in held.evidence
    assert d.spout_held(FREE, CONF) is None
    assert d.spout_held(EMPTY, CONF) is None


def test_trees_in_flight_growing():
    # The window off: the spout emits what its source offers, the bolt takes 80/s.
    piling = spout(SpoutTaskView(1, emitted=197, acked=69, timed_out=17))
    symptom = d.in_flight_growing(piling)
    assert symptom is not None and "its trees completing 86/s" in symptom.evidence
    assert round(symptom.pressure) == 650  # 197 offered for 69 served: 3 tasks for 1
    assert d.in_flight_growing(FREE) is None and d.in_flight_growing(HELD) is None
    assert d.in_flight_growing(EMPTY) is None
    # Not acking (no trees): nothing to tell.
    assert d.in_flight_growing(spout(SpoutTaskView(1, emitted=200))) is None


def test_tuples_lost_against_acks():
    lost = spout(SpoutTaskView(1, acked=33, timed_out=46, failed=1))
    symptom = d.tuples_lost(lost, CONF, 60)
    assert symptom is not None and "46.0/s timed out" in symptom.evidence
    assert round(symptom.pressure, 1) == 587.5  # (33 + 47) / 33 times what is served
    all_lost = d.tuples_lost(spout(SpoutTaskView(1, timed_out=50)), CONF, 60)
    assert all_lost is not None and all_lost.pressure == 999
    assert d.tuples_lost(spout(SpoutTaskView(1, acked=200, failed=1)), CONF, 60) is None
    assert d.tuples_lost(spout(SpoutTaskView(1, acked=0, failed=0.01)), CONF, 60) is None


def test_source_lag_growing():
    symptom = d.lag_growing(spout(SpoutTaskView(1, lags=[100, 400, 900, 1500])))
    assert symptom is not None and "100 -> 1500" in symptom.evidence
    assert d.lag_growing(spout(SpoutTaskView(1, lags=[100, 0, 80, 0]))) is None
    assert d.lag_growing(spout(SpoutTaskView(1))) is None  # a spout that does not say


def test_the_bottleneck_is_the_upstream_most_bolt_at_capacity():
    bolts = {"parse": bolt("parse", TaskView(2, capacity=0.4)),
             "work": bolt("work", BUSY),
             "sink": bolt("sink", TaskView(5, capacity=0.99))}
    order = ["parse", "work", "sink"]
    neck = bottleneck(bolts, {"source": HELD}, order, CONF, 60)
    assert neck is not None and (neck.kind, neck.component) == ("under-provisioned", "work")
    assert "work at capacity" in neck.symptoms and "held by its in-flight" in neck.symptoms
    assert neck.pressure == 600
    assert scaled_parallelism(bolts["work"], 8, neck.pressure) == 3  # 80/s -> 200/s
    # Nothing held back: a busy bolt that keeps up is left alone.
    assert bottleneck(bolts, {"source": FREE}, order, CONF, 60) is None
    # An idle spout (its source empty), nothing busy: nothing at all.
    quiet = {n: bolt(n, TaskView(i, capacity=0.01)) for i, n in enumerate(order)}
    assert diagnose_topology(quiet, {"source": EMPTY}, order, CONF, 60) == []
    # Held, but no bolt at capacity (the limit is elsewhere): no bolt to blame.
    assert bottleneck(quiet, {"source": HELD}, order, CONF, 60) is None


def test_the_demand_comes_from_the_most_telling_sign():
    lost = spout(SpoutTaskView(1, emitted=197, acked=69, timed_out=17))
    growing = TaskView(3, capacity=0.99, rate=80, intake=11600, growth=7000,
                       queues=[3e4, 2e5, 3e5, 4.5e5])
    neck = bottleneck({"work": bolt("work", growing)}, {"source": lost}, ["work"], CONF, 60)
    assert neck is not None and round(neck.pressure) == 650  # trees in flight, not the queue
    assert "timed out" in neck.symptoms and "queue growing" in neck.symptoms
    assert scaled_parallelism(bolt("work", growing), 8, neck.pressure) == 3


def test_a_growing_queue_alone_points_at_its_bolt():
    growing = TaskView(3, capacity=0.99, rate=80, intake=8000, growth=12000,
                       queues=[1e4, 2e5, 4e5, 6e5])
    neck = bottleneck({"work": bolt("work", growing)}, {"source": FREE}, ["work"], CONF, 60)
    assert neck is not None and neck.kind == "under-provisioned"
    assert round(neck.pressure) == 600


def test_one_task_at_capacity_is_a_slow_instance_or_skew():
    slow = {"work": bolt("work", TaskView(3, capacity=0.99, rate=40, intake=4000),
                         TaskView(4, capacity=0.3, rate=41, intake=4100))}
    neck = bottleneck(slow, {"source": HELD}, ["work"], CONF, 60)
    assert neck is not None and (neck.kind, neck.task) == ("slow-instance", 3)
    skew = {"work": bolt("work", TaskView(3, capacity=0.99, rate=80, intake=8000),
                         TaskView(4, capacity=0.1, rate=8, intake=800))}
    neck = bottleneck(skew, {"source": HELD}, ["work"], CONF, 60)
    assert neck is not None and (neck.kind, neck.task) == ("data-skew", 3)


def test_herons_rules_come_first_and_a_bolt_is_diagnosed_once():
    bp = TaskView(3, backpressure=700, rate=80, capacity=0.99)
    found = diagnose_topology({"work": bolt("work", bp)}, {"source": HELD}, ["work"], CONF, 60)
    assert [(x.kind, x.pressure) for x in found] == [("under-provisioned", None)]
    crashing = TaskView(5, restarts=3, exception="E: x")
    found = diagnose_topology({"work": bolt("work", BUSY), "sink": bolt("sink", crashing)},
                              {"source": HELD}, ["work", "sink"], CONF, 60)
    assert [(x.kind, x.component) for x in found] == \
        [("failing-task", "sink"), ("under-provisioned", "work")]


def sample(t: float, spout_counters: dict, bolt_counters: dict, queue: float):
    ms = int(t * 1000)
    return control_pb2.MetricsReport(all_ready=True, tasks=[
        control_pb2.TaskMetrics(component="source", task_id=1, timestamp_ms=ms,
                                counters=spout_counters, gauges={"source-lag": 10 * t}),
        control_pb2.TaskMetrics(component="work", task_id=2, timestamp_ms=ms,
                                counters=bolt_counters),
        control_pb2.TaskMetrics(component="__stmgr__", task_id=-1, timestamp_ms=ms,
                                counters={"bytes-to/task/2": 1000 * t},
                                gauges={"queue-bytes/task/2": queue})])


def test_the_window_measures_capacity_held_time_rates_and_series():
    window = Window(60)
    for t in range(0, 61, 10):
        window.add(sample(t, {"window-held-ms": 600 * t, "emit-count": 80 * t,
                              "ack-count": 79 * t, "timeout-count": t, "fail-count": 0},
                          {"execute-time-ns": 0.97e9 * t, "execute-count": 80 * t},
                          queue=100 * t), now=t)
    src = window.spouts({"source": (1,)})["source"].tasks[1]
    assert (src.held, src.emitted, src.acked, src.timed_out) == (600, 80, 79, 1)
    assert src.lags == [10.0 * t for t in range(0, 61, 10)]
    work = window.components({"work": (2,)})["work"].tasks[2]
    assert round(work.capacity, 2) == 0.97 and work.rate == 80 and work.intake == 1000
    assert work.queues == [100.0 * t for t in range(0, 61, 10)] and work.growth == 100
