"""A long start is never silent: `run` and `submit` say how many tasks have registered
and started, on a terminal's status line at each of the master's reports, and off one a
line every few seconds."""

from __future__ import annotations

from heronbridge.cli.starting import PRINT_SECS, StartProgress
from heronbridge.runtime import Bolt, Grouping, Spout, TopologyBuilder
from heronbridge.runtime.plan import TaskLayout
from heronbridge.runtime.proto import control_pb2
from heronbridge.runtime.telemetry import UPTIME_SECS


class Words(Spout):
    outputs = ["word"]


class Count(Bolt):
    pass


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Status:
    def __init__(self) -> None:
        self.said: list[str] = []

    def update(self, text: str) -> None:
        self.said.append(text)


def plan_of():
    b = TopologyBuilder("wide", {"topology.reliability.mode": "ATLEAST_ONCE"})
    b.spout("words", Words, par=3)
    b.bolt("count", Count, inputs={"words": Grouping.SHUFFLE}, par=30)
    return b.build()


def report(plan, registered: int, started: int) -> control_pb2.MetricsReport:
    out = control_pb2.MetricsReport()
    out.tasks.add(component="__stmgr__", task_id=-1)
    for i, (task, component) in enumerate(sorted(TaskLayout.of(plan).task_component.items())):
        if i < registered:
            one = out.tasks.add(component=component, task_id=task)
            if i < started:
                one.gauges[UPTIME_SECS] = 0.5
    return out


def test_off_a_terminal_a_line_every_few_seconds_says_how_far_the_start_is():
    plan, clock, lines = plan_of(), Clock(), []
    progress = StartProgress(plan, Status(), False, clock, lines.append)
    progress.tick()
    progress.see(report(plan, 4, 0))
    assert lines == []  # a quick start says nothing more
    clock.now += PRINT_SECS
    progress.see(report(plan, 12, 5))
    clock.now += 1
    progress.see(report(plan, 20, 9))
    clock.now += PRINT_SECS
    progress.see(report(plan, 33, 30))
    assert lines == ["starting wide: 5 of 33 tasks started, 12 registered (5s)",
                     "starting wide: 30 of 33 tasks started, 33 registered (11s)"]


def test_on_a_terminal_the_status_line_follows_each_report():
    plan, clock, status = plan_of(), Clock(), Status()
    progress = StartProgress(plan, status, True, clock, lambda line: None)
    progress.see(report(plan, 1, 0))
    clock.now += 2
    progress.see(report(plan, 33, 2))
    assert status.said == ["starting wide: 0 of 33 tasks started, 1 registered (0s)",
                           "starting wide: 2 of 33 tasks started, 33 registered (2s)"]


def test_before_the_masters_first_report_the_wait_is_said_too():
    plan, clock, lines = plan_of(), Clock(), []
    progress = StartProgress(plan, Status(), False, clock, lines.append)
    for _ in range(int(2 * PRINT_SECS)):
        clock.now += 1
        progress.tick()
    progress.see(report(plan, 2, 0))
    assert lines == ["starting wide: waiting for its topology master (5s)",
                     "starting wide: waiting for its topology master (10s)"]
    clock.now += PRINT_SECS
    progress.tick()  # the reports say it from now on
    assert len(lines) == 2
