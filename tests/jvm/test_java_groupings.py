"""Java custom groupings (Storm's CustomStreamGrouping) with a sender that is not Java: a
JVM beside the Python task prepares each once and chooses the tasks of every emit, as
Storm runs them in a ShellBolt's or ShellSpout's worker JVM."""

from __future__ import annotations

import json
import random
import re
import time

import pytest
from conftest import PROJECTS
from testkit import Running, read_jsonl, wait_until

from heronbridge.compat.streamparse import load_project
from heronbridge.jvm.storm import give_classpath
from heronbridge.runtime.errors import PlanError
from heronbridge.runtime.grouping import OutBuffer, make_router
from heronbridge.runtime.instance.emitter import stream_table
from heronbridge.runtime.instance.java_groupings import JavaGroupings
from heronbridge.runtime.plan import TaskLayout
from heronbridge.runtime.plan.builder import TopologyBuilder
from heronbridge.runtime.plan.logical import Grouping
from heronbridge.runtime.wire.serde import make_serializer

pytestmark = [pytest.mark.jvm, pytest.mark.integration]

CUSTOMGROUP = PROJECTS / "customgroup"
OFFSET = 1  # TypedModGrouping's constructor argument in the project
# ints as Integer, 2**40 as Long, strings: what a ShellBolt's JSON gives chooseTasks
VALUES = [*range(9), 2**40, "a", "bb", "ccc", "dddd"]


def typed_mod(value, targets: list[int]) -> list[int]:
    """What jvmtests.TypedModGrouping chooses, by the Java type Storm's multilang JSON
    gives the value."""
    if isinstance(value, int) and -(2**31) <= value < 2**31:
        return [targets[(value + OFFSET) % len(targets)]]
    if isinstance(value, int):
        return targets
    return [targets[(len(value) + OFFSET) % len(targets)]]


@pytest.mark.parametrize("multilang", [
    pytest.param(True, id="multilang",
                 marks=pytest.mark.compat("grouping/custom", on="multilang")),
    pytest.param(False, id="in-process")])
def test_a_python_sender_delivers_each_tuple_where_the_java_grouping_chose(
        home, state, storm_home, java_jars, tmp_path, multilang):
    out = tmp_path / "out"
    name = "customgroup"
    project = load_project(CUSTOMGROUP, name, None,
                           {"group.out": str(out), "group.values": VALUES}, multilang,
                           home.workdir(name) / "resources", java_jars=java_jars)
    give_classpath(project.plan, project.java_jars, storm_home)
    targets = list(TaskLayout.of(project.plan).component_tasks["seen"])
    expected = sorted((t, json.dumps(v)) for v in VALUES for t in typed_mod(v, targets))

    def seen() -> list[tuple[int, str]]:
        return sorted((r["task"], json.dumps(r["v"]))
                      for rows in read_jsonl(out).values() for r in rows)

    run = Running(project.plan, home, state, project)
    with run:
        wait_until(lambda: len(seen()) >= len(expected), 90, "every tuple where it was sent",
                   on_timeout=lambda: f"{seen()}\n{run.logs()[-20000:]}")
        time.sleep(0.3)  # nothing more arrives
    assert seen() == expected
    assert len({t for t, _ in seen()}) == 3  # the offset and the Long reached every task


def plan_with(custom: dict, serializer: str = "json", storm_home=None, jars=()):
    b = TopologyBuilder("typed", {"heronbridge.serializer": serializer})
    values = b.spout("values", "parts.values:ValueSpout", outputs=["v"])
    b.bolt("seen", "parts.values:SeenBolt",
           {values: Grouping.custom_grouping(json.dumps(custom))}, par=3)
    plan = b.build()
    if storm_home is not None:
        give_classpath(plan, list(jars), storm_home)
    return plan


def groupings_of(plan) -> JavaGroupings:
    layout = TaskLayout.of(plan)
    [task] = layout.component_tasks["values"]
    return JavaGroupings(plan, "typed-0123456789ab", task, 0, frozenset(layout.task_component),
                         make_serializer(plan.config["heronbridge.serializer"]))


WHERE = r"topology 'typed', component 'values', task \d+, stream 'default' to 'seen'"


def test_bad_java_groupings_are_named_with_what_was_expected_and_received(storm_home,
                                                                          java_jars):
    """A class not on the classpath (refused at the task's start); chooseTasks that
    throws, and a task id that is no target (refused at the emit); each named with its
    topology, component, task and stream. The JVM ends when the task's link closes."""
    jars = sorted(java_jars.glob("*.jar"))
    missing = groupings_of(plan_with({"class": "jvmtests.NoSuchGrouping", "args": []},
                                     storm_home=storm_home, jars=jars))
    with pytest.raises(PlanError, match=WHERE + ": expected a class on the task's classpath, "
                                        "received 'jvmtests.NoSuchGrouping'"):
        missing.start()
    assert missing.process is None

    plan = plan_with({"class": "jvmtests.TypedModGrouping", "args": [{"long": OFFSET}]},
                     "msgpack", storm_home, jars)
    groupings = groupings_of(plan)
    groupings.start()
    try:
        layout = TaskLayout.of(plan)
        targets = list(layout.component_tasks["seen"])
        index = [(c, s) for c, s, _ in stream_table(plan)].index(("values", "default"))
        choose = groupings.chooser("default", index, "seen", targets[0])
        assert [choose([v]) for v in VALUES] == [typed_mod(v, targets) for v in VALUES]
        with pytest.raises(PlanError, match=WHERE + r", custom grouping jvmtests.TypedModGrouping: "
                                            r"chooseTasks raised java.lang.IllegalStateException: "
                                            r"no route for boom"):
            choose(["boom"])
        route = make_router(plan.components["seen"].inputs[0].grouping,
                            [OutBuffer(index, t) for t in targets], ["v"], frozenset(),
                            random.Random(0), None, "default", choose, "seen")
        assert route([5]).tasks == (targets[(5 + OFFSET) % 3],)
        stray = re.escape(f"on stream 'default' to 'seen' must choose task ids among "
                          f"{targets}, chose [9999] for values [-1]")
        with pytest.raises(PlanError, match="the Java custom grouping .*TypedModGrouping.* "
                                            + stray):
            route([-1])
        process = groupings.process
        assert process is not None and process.poll() is None
    finally:
        groupings.close()
    assert process.poll() is not None  # ended with its task's link


def test_a_java_grouping_needs_a_serializer_java_reads(tmp_path):
    plan = plan_with({"class": "jvmtests.TypedModGrouping", "args": []}, "pickle")
    with pytest.raises(PlanError, match=r"topology 'typed', component 'values', task \d+: its "
                                        r"Java custom groupings 'default' to 'seen' read the "
                                        r"values in the topology's serializer; expected one of "
                                        r"\('json', 'msgpack'\), received 'pickle'"):
        groupings_of(plan).start()


def test_the_jvm_ends_when_its_task_dies(storm_home, java_jars):
    """The task's process gone (its end of the link closed by the kernel): the JVM
    exits by itself."""
    plan = plan_with({"class": "jvmtests.TypedModGrouping", "args": [{"long": 0}]},
                     storm_home=storm_home, jars=sorted(java_jars.glob("*.jar")))
    groupings = groupings_of(plan)
    groupings.start()
    process = groupings.process
    try:
        assert groupings.sock is not None
        groupings.sock.close()  # as the kernel closes it when the task dies
        process.wait(10)
    finally:
        groupings.sock = None
        groupings.close()
    assert process.returncode == 0
