"""How long a task's component stayed up, as its task publishes it, and what the command
line concludes from it: a task that keeps dying before it starts is a failed start, one
that kept crashing never stayed up, and one crash followed by a run that goes on is
neither. Units: a Task without sockets, the pulled host with a connection that reads
nothing, and the master's reports built by hand."""

from __future__ import annotations

from heronbridge.runtime import Bolt, Grouping, Spout, TopologyBuilder, failures
from heronbridge.runtime.api import LoopOwner
from heronbridge.runtime.instance.pull import PullHost
from heronbridge.runtime.instance.task import Task
from heronbridge.runtime.plan import TaskLayout
from heronbridge.runtime.proto import control_pb2
from heronbridge.runtime.telemetry import CRASH_COUNT, LONGEST_UPTIME_SECS, UPTIME_SECS


class Words(Spout):
    outputs = ["word"]

    def next_tuple(self):
        self.collector.emit(["a"])


class Sink(Bolt):
    def execute(self, tup):
        pass


class OwnLoop(LoopOwner):
    """A spout that keeps its own loop (as a multilang spout's host does)."""

    outputs = ["word"]


class Published:
    def __init__(self) -> None:
        self.samples: list = []

    def publish(self, metrics):
        self.samples.append(metrics)


class Conn:
    """A registered task's connection that never has anything to read."""

    out_bytes = 0
    ready_fds: list = []

    def watch(self, fd):
        pass

    def unwatch(self, fd):
        pass

    def poll(self, timeout, read=True):
        return b"", []


def task_of(component: str, spout: type = Words) -> tuple[Task, list, Published]:
    b = TopologyBuilder("uptime")
    b.spout("words", spout)
    b.bolt("sink", Sink, inputs={"words": Grouping.SHUFFLE})
    plan = b.build()
    layout = TaskLayout.of(plan)
    task = Task("uptime-1", layout.component_tasks[component][0], 0, "", "", secret=b"")
    task.attach(plan, frozenset(layout.task_component), seed=1)
    sent: list = []
    task.send = sent.append
    task.telemetry.publisher = published = Published()
    return task, sent, published


def test_a_task_publishes_its_uptime_from_when_its_component_is_set_up():
    for component in ("words", "sink"):
        task, _, published = task_of(component)
        task.publish()
        assert UPTIME_SECS not in published.samples[-1].gauges  # not opened or prepared
        task.start_component()
        task.publish()
        gauges = published.samples[-1].gauges
        assert UPTIME_SECS in gauges, dict(gauges)  # (a protobuf map reads a missing key as 0)
        task.publish()
        assert 0 <= gauges[UPTIME_SECS] <= published.samples[-1].gauges[UPTIME_SECS]


def test_a_component_that_owns_its_loop_is_up_when_it_asks_for_its_first_event():
    task, sent, _ = task_of("words", OwnLoop)
    task.link = Conn()
    host = PullHost(task)
    assert host.next_command(timeout=0) is None and sent  # InstanceStarted went out
    assert task.telemetry.started_at is not None


def test_one_that_says_when_it_is_up_starts_at_its_first_event_but_is_up_when_it_says():
    task, sent, published = task_of("words", OwnLoop)
    task.link = Conn()
    host = PullHost(task)
    host.up_when_told()
    assert host.next_command(timeout=0) is None and sent  # started: the topology may run
    task.publish()
    assert task.telemetry.started_at is None and UPTIME_SECS not in published.samples[-1].gauges
    host.started()  # its subprocess answered its first command
    task.publish()
    assert UPTIME_SECS in published.samples[-1].gauges
    before = len(sent)
    host.started()
    assert len(sent) == before  # started once


def report(*tasks: dict) -> control_pb2.MetricsReport:
    out = control_pb2.MetricsReport()
    for i, t in enumerate(tasks, start=1):
        one = out.tasks.add(component=t.get("component", f"c{i}"), task_id=i,
                            incarnation=t.get("incarnation", 0))
        one.counters[CRASH_COUNT] = t.get("crashes", 0)
        one.gauges[LONGEST_UPTIME_SECS] = t.get("longest", 0.0)
        if "uptime" in t:
            one.gauges[UPTIME_SECS] = t["uptime"]
        if t.get("crashes") or t.get("incarnation"):
            one.exceptions.add(class_name="ValueError", message="the 1000th", first_ms=i)
    return out


def test_one_crash_followed_by_a_run_that_goes_on_never_counts_as_never_up():
    cases = {
        # raised once on its 1,000th tuple, its restart ran 14 s
        "long restart": ({"crashes": 1, "incarnation": 1, "longest": 14.0, "uptime": 14.0},
                         False),
        # the same, the run ending 6 s after the restart
        "short run": ({"crashes": 1, "incarnation": 1, "longest": 6.0, "uptime": 6.0}, False),
        # crashed once, and its restart has not started (yet) as the run ends
        "down since": ({"crashes": 1, "incarnation": 1, "longest": 1.9}, True),
        # crashed as the run ends: its last sample is the one it sent as it died
        "just crashed": ({"crashes": 1, "incarnation": 0, "longest": 3.0, "uptime": 3.0},
                         True),
        # crashing every few seconds: a crash loop
        "crash loop": ({"crashes": 4, "incarnation": 4, "longest": 2.5, "uptime": 1.0}, True),
        # restarted over and over without an exception (killed)
        "killed": ({"incarnation": 3, "longest": 1.0, "uptime": 0.5}, True),
        # died once before it ever started
        "never started": ({"crashes": 1, "incarnation": 1}, True),
        # crashed three times, one of its runs lasted 30 s
        "stayed once": ({"crashes": 3, "incarnation": 3, "longest": 30.0, "uptime": 2.0},
                        False),
        "healthy": ({"longest": 20.0, "uptime": 20.0}, False),
    }
    for name, (task, expected) in cases.items():
        gone = failures.never_up("t", report(task))
        assert bool(gone) == expected, (name, gone)
        if expected:
            assert gone[0].component == "c1" and gone[0].longest_up == task.get("longest", 0)


def test_a_task_that_keeps_dying_before_it_starts_is_a_failed_start():
    assert failures.start_failure("t", report({"incarnation": 3, "crashes": 3})).task == 1
    assert failures.start_failure("t", report({"incarnation": 2, "crashes": 2})) is None
    # It started once: a crash loop after the start, not a failed start.
    assert failures.start_failure("t", report({"incarnation": 3, "crashes": 3,
                                               "longest": 0.4})) is None
    # A run that ends before the third death (a multilang spout's child dies after the
    # topology runs): once is enough then, counted as it died, before its restart.
    assert failures.start_failure("t", report({"crashes": 1}), deaths=1).task == 1
    assert failures.start_failure("t", report({"crashes": 1, "incarnation": 1,
                                               "longest": 5.0}), deaths=1) is None
    assert failures.start_failure("t", report({"longest": 5.0, "uptime": 5.0}),
                                  deaths=1) is None


def test_a_report_without_the_restart_of_a_task_that_crashed_once_is_not_final():
    """`run` asks the master again for such a report (a few metrics intervals at most): its
    last one may predate the restart's first sample, which says whether it stayed up."""
    assert failures.restarting(report({"crashes": 1, "incarnation": 1, "longest": 0.5}))
    assert failures.restarting(report({"crashes": 1, "longest": 0.5, "uptime": 0.5}))
    assert not failures.restarting(report({"crashes": 1, "incarnation": 1, "longest": 0.5,
                                           "uptime": 0.2}))  # the restart's sample came
    assert failures.restarting(report({"incarnation": 1, "longest": 1.0}))  # killed once
    assert not failures.restarting(report({"crashes": 3, "incarnation": 3}))  # a crash loop
    assert not failures.restarting(report({"longest": 20.0, "uptime": 20.0}))
