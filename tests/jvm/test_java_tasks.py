"""Java components as runtime tasks, each one JVM started and restarted by its executor:
streamparse projects with JavaSpout/JavaBolt specs, judged by what came out."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import time
from collections import Counter
from pathlib import Path

import pytest
from conftest import PROJECTS, ROOT
from testkit import Running, wait_until

from heronbridge.compat.streamparse import load_project, topology_name
from heronbridge.jvm.storm import give_classpath
from heronbridge.runtime import admin
from heronbridge.runtime.errors import SchedulerError
from heronbridge.runtime.plan import TaskLayout
from heronbridge.runtime.plan.builder import TopologyBuilder
from heronbridge.runtime.plan.logical import Grouping
from heronbridge.runtime.scheduler import jvm

pytestmark = [pytest.mark.jvm, pytest.mark.integration]

JAVAMIX = ROOT / "examples" / "storm_topologies" / "javamix"
SENTENCES = ["the cow jumped over the moon", "an apple a day keeps the doctor away",
             "four score and seven years ago", "snow white and the seven dwarfs",
             "i am at two with nature"]


def run_project(home, state, storm_home, path: Path, jars: Path | None,
                options: dict, name: str | None = None) -> Running:
    name = topology_name(path, name)
    project = load_project(path, name, None, options, False, home.workdir(name) / "resources",
                           java_jars=jars)
    give_classpath(project.plan, project.java_jars, storm_home)
    return Running(project.plan, home, state, project)


def jsonl(folder: Path, prefix: str) -> list:
    out = []
    for path in sorted(folder.glob(f"{prefix}-*.jsonl")):
        for line in path.read_text().splitlines():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                continue  # a line being written
    return out


def java_pids(run: Running, component: str, task: int) -> list[int]:
    log = run.workdir / "container-0" / "logs" / f"task-{task}-{component}.log"
    text = log.read_text(errors="replace") if log.is_file() else ""
    return [int(p) for p in re.findall(r"started \(incarnation \d+, pid (\d+), JVM\)", text)]


def test_storm_testing_components_count_what_the_python_relay_passed(home, state, storm_home,
                                                                     java_jars, tmp_path):
    """TestWordSpout -> Python relay -> TestWordCounter (2 tasks, fields) -> Python sink:
    every word the relay passed was counted once, by one counter, in order."""
    out = tmp_path / "out"
    run = run_project(home, state, storm_home, PROJECTS / "testwords", None,
                      {"words.out": str(out)})
    with run:
        wait_until(lambda: len(jsonl(out, "sink")) >= 30, 60, "30 counts from TestWordCounter",
                   on_timeout=run.logs)
        admin.deactivate(state, run.name)
        settled = []

        def quiet() -> bool:  # the relay's words all counted, and nothing new for 1 s
            now = (len(jsonl(out, "relay")), len(jsonl(out, "sink")))
            settled.append(now)
            return now[0] == now[1] and len(settled) > 10 and settled[-11] == now

        wait_until(quiet, 30, "the counts to catch up with the relay", on_timeout=run.logs)
    relayed = Counter(jsonl(out, "relay"))
    counts: dict[str, list[int]] = {}
    for word, count in jsonl(out, "sink"):
        counts.setdefault(word, []).append(count)
    assert set(relayed) <= {"nathan", "mike", "jackson", "golda", "bertels"}
    assert {w: sorted(c) for w, c in counts.items()} == \
        {w: list(range(1, n + 1)) for w, n in relayed.items()}


def test_java_spout_python_bolt_java_bolt_counts_exactly(home, state, storm_home, java_jars,
                                                         tmp_path):
    """examples/storm_topologies/javamix: each word counted exactly as often as the
    sentences hold it, the Java code from a jar folder (--java-jars)."""
    out, rounds = tmp_path / "out", 10
    expected = Counter(w for s in SENTENCES for w in s.split() for _ in range(rounds))
    run = run_project(home, state, storm_home, JAVAMIX, java_jars,
                      {"example.output.dir": str(out), "javamix.rounds": rounds}, "javamix")
    assert run.plan.components["count"].config[jvm.COMPONENT] == \
        {"class": "javamix.CountBolt", "args": [{"string": "word"}]}

    def finals() -> dict[str, int]:
        best: dict[str, int] = {}
        for r in jsonl(out, "results"):
            best[r["word"]] = max(best.get(r["word"], 0), r["count"])
        return best

    with run:
        wait_until(lambda: finals() == dict(expected), 90, "every word counted",
                   on_timeout=lambda: f"{finals()}\n{run.logs()[-20000:]}")
    seen = Counter(r["word"] for r in jsonl(out, "results"))
    assert seen == expected  # one count emitted per occurrence: nothing replayed twice


def test_java_task_killed_mid_run_loses_no_acked_id(home, state, storm_home, java_jars,
                                                    tmp_path):
    """kill -9 of a Java relay task with tuples in its socket, under at-least-once
    (pystorm's ReliableSpout ids): its executor restarts it, the lost trees fail and are
    replayed, and every id acked to the spout reached the sink."""
    out, ids = tmp_path / "out", 1000
    run = run_project(home, state, storm_home, PROJECTS / "javarelay", java_jars,
                      {"relay.out": str(out), "relay.count": ids, "relay.rate": 100,
                       "topology.message.timeout.secs": 5})

    def events() -> list[dict]:
        return jsonl(out, "spout")

    task = TaskLayout.of(run.plan).component_tasks["relay"][0]
    with run:
        wait_until(lambda: sum(e["event"] == "ack" for e in events()) >= 200, 60,
                   "200 acks", on_timeout=run.logs)
        pid = wait_until(lambda: java_pids(run, "relay", task)[-1:], 10, "the relay's pid")[0]
        # Stopped first, so tuples wait in its socket when it dies: a relay killed idle
        # loses nothing, as the stream manager holds its frames until it is back.
        os.kill(pid, signal.SIGSTOP)
        time.sleep(1)
        os.kill(pid, signal.SIGKILL)
        acked_before = {e["id"] for e in events() if e["event"] == "ack"}
        wait_until(lambda: any(p != pid for p in java_pids(run, "relay", task)), 60,
                   "the killed relay's restart", on_timeout=run.logs)
        wait_until(lambda: {e["id"] for e in events() if e["event"] == "ack"} == set(range(ids)),
                   120, "every id acked", interval=0.5,
                   on_timeout=lambda: run.logs()[-20000:])
        time.sleep(0.5)
    seen = set()
    for path in out.glob("sink-*.txt"):
        seen |= {int(line) for line in path.read_text().splitlines() if line.isdigit()}
    acked = {e["id"] for e in events() if e["event"] == "ack"}
    assert sorted(acked - seen) == []
    assert len(acked_before) < ids - 300, "the kill came too late to cost the run anything"
    assert any(e["event"] == "fail" for e in events())  # the kill cost the in-flight trees


def test_bad_java_components_are_named_by_topology_component_and_task(home, state,
                                                                      storm_home, java_jars):
    """A class not on the classpath, a constructor that does not take args_list and a
    prepare that throws, each named with its topology, component and task."""
    b = TopologyBuilder("badjava", {"heronbridge.serializer": "json",
                                    "heronbridge.restart.backoff.secs": 0.2})

    def java(cls: str, *args: dict) -> dict:
        return {jvm.COMPONENT: {"class": cls, "args": list(args)}}

    words = b.spout("words", "java:org.apache.storm.testing.TestWordSpout",
                    outputs=["word"], config=java("org.apache.storm.testing.TestWordSpout",
                                                  {"string": "not a boolean"}))
    b.spout("missing", "java:javamix.NoSuchSpout", outputs=["word"],
            config=java("javamix.NoSuchSpout"))
    b.bolt("throws", "java:jvmtests.PrepareThrows", {words: Grouping.SHUFFLE},
           config=java("jvmtests.PrepareThrows"))
    plan = b.build()
    give_classpath(plan, sorted(java_jars.glob("*.jar")), storm_home)
    with pytest.raises(SchedulerError) as raised:
        Running(plan, home, state).start(timeout=90)
    text = str(raised.value)
    for line in (r"topology 'badjava', component 'missing', task \d+: expected a class on the "
                 r"task's classpath, received 'javamix.NoSuchSpout'",
                 r"topology 'badjava', component 'words', task \d+: expected a public "
                 r"constructor of org.apache.storm.testing.TestWordSpout taking \(String\)",
                 r"topology 'badjava', component 'throws', task \d+: prepare raised "
                 r"java.lang.IllegalStateException: no database at db.invalid"):
        assert re.search(line, text), text


BEANS = PROJECTS / "beans"
READINGS = 20
# Storm 2.8.3's defaults turn Kryo's fallback on Java serialization off: a bean class (and
# the Date inside it) crosses between workers only registered, on Storm as here.
BEAN_OPTIONS = {"beans.count": READINGS,
                "topology.kryo.register": ["jvmtests.beans.Reading", "java.util.Date",
                                           "java.math.BigDecimal"]}
# The classes of the numbers (Reading.extras) a Java bolt must get, as Storm's Kryo keeps them.
NUMBER_CLASSES = ["java.lang.Float", "java.lang.Short", "java.lang.Byte", "java.math.BigDecimal"]
JAVA_DATE = re.compile(r"[A-Z][a-z]{2} [A-Z][a-z]{2} \d\d \d\d:\d\d:\d\d \S+ \d{4}")


def beans_on_the_runtime(home, state, storm_home, java_jars, project: Path, name: str,
                         out: Path) -> dict[int, list]:
    """Run the beans project until every reading was checked and recorded; the Python
    bolt's records by id, after checking the Java bolt got every one as the bean it was."""
    run = run_project(home, state, storm_home, project, java_jars,
                      {"beans.out": str(out), **BEAN_OPTIONS}, name)

    def ids(prefix: str) -> set[int]:
        return {r["id"] if isinstance(r, dict) else r[1] for r in jsonl(out, prefix)}

    with run:
        wait_until(lambda: ids("check") == ids("record") == set(range(READINGS)), 90,
                   "every reading checked by the Java bolt and recorded by the Python one",
                   on_timeout=lambda: run.logs()[-20000:])
    checks = jsonl(out, "check")
    assert [c for c in checks if c["class"] != "jvmtests.beans.Reading" or not c["equal"]
            or not c["extras"] or c["numbers"] != NUMBER_CLASSES] == []
    return {r[1]: r for r in jsonl(out, "record")}


def test_beans_cross_as_storm_carries_them(home, state, storm_home, storm_install, java_jars,
                                           tmp_path):
    """jvmtests.beans.ReadingSpout emits Java beans, Characters, infinite floats and a list
    of a Float, Short, Byte and BigDecimal: the Java bolt gets each as the same class with
    equal fields (Storm's Kryo bytes between the JVMs: base64 in a JSON record, a msgpack
    extension with the msgpack serializer), the Python bolt gets the JSON Storm 2.8.3's
    ShellBolt sends its subprocess for it (json-smart: the bean's properties, its Date as
    Date.toString(), a Character as {}, an infinity as null, the numbers as JSON numbers),
    line for line what it gets on Storm."""
    from heronbridge.conformance.scenario import Scenario
    from heronbridge.conformance.storm.run import run_on_storm

    records = beans_on_the_runtime(home, state, storm_home, java_jars, BEANS, "beans",
                                   tmp_path / "json")
    for i in (0, 7, 8):
        reading, rid, symbol, ratio, extremes, numbers = records[i]
        assert rid == i
        assert (symbol, ratio, extremes) == ({}, None, [None, {}, {"c": {}, "low": None}])
        assert numbers == [1.1, i, -i, 1.1]  # 1.1f as json-smart writes it, not 1.100000023841858
        assert set(reading) == {"id", "sensor", "taken", "tags", "value"}, reading
        assert {k: reading[k] for k in ("id", "sensor", "tags", "value")} == \
            {"id": i, "sensor": f"sensor-{i % 3}", "tags": [f"t{i}", "odd" if i % 2 else "even"],
             "value": i + 0.5}
        assert JAVA_DATE.fullmatch(reading["taken"]), reading

    msgpack = tmp_path / "beans-msgpack"
    shutil.copytree(BEANS, msgpack)
    config = json.loads((msgpack / "config.json").read_text())
    (msgpack / "config.json").write_text(json.dumps({**config, "serializer": "msgpack"}))
    (msgpack / "topologies" / "beans.py").rename(msgpack / "topologies" / "beans_msgpack.py")
    assert beans_on_the_runtime(home, state, storm_home, java_jars, msgpack, "beans_msgpack",
                                tmp_path / "msgpack") == records

    # The same project on Storm 2.8.3 (local mode): the Python bolt's lines are the same.
    on_storm = tmp_path / "storm-out"
    scenario = Scenario(name="beans", project=BEANS, quiet=3.0, timeout=150.0,
                        options={"beans.out": str(on_storm), **BEAN_OPTIONS})
    project = load_project(BEANS, None, None, scenario.storm_options(), java_jars=java_jars)
    storm = run_on_storm(project, scenario, tmp_path / "storm-run", install=storm_install)
    assert storm.finished, storm.explanation
    storm_checks = jsonl(on_storm, "check")
    assert {c["id"] for c in storm_checks} == set(range(READINGS))
    assert all(c["class"] == "jvmtests.beans.Reading" and c["equal"] and c["extras"]
               and c["numbers"] == NUMBER_CLASSES for c in storm_checks)
    assert records == {r[1]: r for r in jsonl(on_storm, "record")}
