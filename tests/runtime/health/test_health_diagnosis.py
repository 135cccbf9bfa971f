"""Dhalion's diagnoses from sensor views, and the scale-up rule."""

from __future__ import annotations

import pytest

from heronbridge.runtime.errors import ConfigError
from heronbridge.runtime.health import ComponentView, HealthConfig, diagnose
from heronbridge.runtime.health.diagnosis import scaled_parallelism
from heronbridge.runtime.health.sensors import TaskView

CONF = HealthConfig.read({}, "t")


def view(*tasks: TaskView) -> ComponentView:
    return ComponentView("work", {t.task: t for t in tasks})


def kinds(v: ComponentView) -> list[tuple[str, int | None]]:
    return [(d.kind, d.task) for d in diagnose(v, CONF)]


def test_diagnoses():
    assert kinds(view(TaskView(1, backpressure=5, rate=100))) == []  # noise
    assert kinds(view(TaskView(1, backpressure=700, rate=90))) == \
        [("under-provisioned", None)]
    even = view(TaskView(1, backpressure=300, rate=80, queue=9e5),
                TaskView(2, backpressure=280, rate=82, queue=8e5))
    assert kinds(even) == [("under-provisioned", None)]
    skew = view(TaskView(1, backpressure=600, rate=100, queue=9e5),
                TaskView(2, backpressure=0, rate=8, queue=0))
    assert kinds(skew) == [("data-skew", 1)]
    slow = view(TaskView(1, backpressure=600, rate=40, queue=9e5),
                TaskView(2, backpressure=0, rate=41, queue=0))
    assert kinds(slow) == [("slow-instance", 1)]
    crashing = view(TaskView(1, backpressure=600, restarts=3, exception="E: x"),
                    TaskView(2))
    assert kinds(crashing) == [("failing-task", 1)]
    growing = view(TaskView(1, growth=4 << 20))
    assert kinds(growing) == [("under-provisioned", None)]


def test_scale_up_follows_herons_rule_under_the_ceiling():
    # n * (1 + bp / (1000 - bp)): spouts held two thirds of the time: three times the tasks.
    assert scaled_parallelism(view(TaskView(1, backpressure=660)), 8) == 3
    assert scaled_parallelism(view(TaskView(1, backpressure=990)), 8) == 5  # at most 4x more
    assert scaled_parallelism(view(TaskView(1, backpressure=990)), 4) == 4
    assert scaled_parallelism(view(TaskView(1, backpressure=30)), 8) == 2  # at least one more


def test_config():
    assert CONF.enabled and HealthConfig.read({"heronbridge.health": "off"}, "t").enabled is False
    with pytest.raises(ConfigError, match="'heronbridge.health' expects 'on' or 'off'"):
        HealthConfig.read({"heronbridge.health": "maybe"}, "t")
    with pytest.raises(ConfigError, match="cooldown.secs' expects a number >= 0"):
        HealthConfig.read({"heronbridge.health.cooldown.secs": -1}, "t")
