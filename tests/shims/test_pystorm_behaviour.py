"""pystorm's documented behaviour, reproduced on the shim: in-process, and with every
Python component as a multilang subprocess (--multilang)."""

from __future__ import annotations

import re
import time
from collections import Counter
from pathlib import Path

import pytest
from testkit import read_jsonl, wait_until

from heronbridge.runtime import control
from heronbridge.runtime.plan import TaskLayout
from heronbridge.shims.heronpy.migrated import Unported

PROJECT = Path(__file__).parent / "project"
STAMP = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}"  # logging's asctime
# Each mode is the matrix column of the rows its tests name (heronbridge.testing.matrix).
MODES = pytest.mark.parametrize("multilang", [
    pytest.param(False, id="in-process", marks=pytest.mark.compat(on="inprocess")),
    pytest.param(True, id="multilang", marks=pytest.mark.compat(on="multilang"))])


def spout_events(out: Path) -> list[dict]:
    return [r for rows in read_jsonl(out, "spout-*.jsonl").values() for r in rows]


def seen(out: Path, component: str) -> list[dict]:
    return [r for name, rows in read_jsonl(out, f"seen-{component}-*.jsonl").items()
            for r in rows]


def outcomes(out: Path) -> dict[int, list[str]]:
    """Each spout tuple's ack and fail callbacks, in order."""
    result: dict[int, list[str]] = {}
    for r in spout_events(out):
        if r["event"] in ("ack", "fail"):
            result.setdefault(r["id"], []).append(r["event"])
    return result


@pytest.mark.compat("api/anchoring", "api/ack", "api/fail", "api/spouts", "api/bolts",
                    "multilang/emit (from a component)", "multilang/ack (from a component)",
                    "multilang/fail (from a component)", "multilang/next (to a spout)",
                    "multilang/ack (to a spout)", "multilang/fail (to a spout)",
                    "multilang/tuple (to a bolt)", "multilang/handshake")
@MODES
@pytest.mark.integration
def test_auto_anchor_and_auto_ack_carry_a_downstream_fail_back_to_the_spout(
        run_project, tmp_path, multilang):
    out, count = tmp_path / "out", 40
    with run_project(PROJECT, "acking", {"test.out": str(out), "test.count": count},
                     multilang) as running:
        wait_until(lambda: len(outcomes(out)) == count, 60, "a callback per tuple",
                   on_timeout=running.logs)
    result = outcomes(out)
    assert {n for n, events in result.items() if events == ["fail"]} == \
        {n for n in range(count) if n % 4 == 0}
    assert {n for n, events in result.items() if events == ["ack"]} == \
        {n for n in range(count) if n % 4}
    rows = seen(out, "passing")
    assert sorted(r["n"] for r in rows) == list(range(count))
    # tup.values is a namedtuple of the source stream's fields (pystorm, Storm >= 0.10)
    assert {(r["component"], r["stream"], r["type"], tuple(r["fields"])) for r in rows} == \
        {("numbers", "default", "NumbersDefaultTuple", ("n",))}


@MODES
@pytest.mark.integration
def test_a_raising_bolt_fails_its_tuple_and_exits_and_only_it_restarts(
        run_project, tmp_path, multilang):
    out, count = tmp_path / "out", 40
    with run_project(PROJECT, "crashing", {"test.out": str(out), "test.count": count},
                     multilang) as running:
        wait_until(lambda: len(outcomes(out)) == count, 60, "a callback per tuple",
                   on_timeout=running.logs)
        executor_log = (running.workdir / "container-0" / "executor.log").read_text()
        hard_log = next((running.workdir / "container-0" / "logs").glob("task-*-hard.log"))
    failed = {n for n, events in outcomes(out).items() if events == ["fail"]}
    # The error names where it happened and what was raised.
    text = hard_log.read_text()
    assert "topology 'crashing', component 'hard', task" in text
    assert "ValueError: cannot process 3" in text
    assert {3, 13, 23, 33} <= failed
    assert all(len(events) == 1 for events in outcomes(out).values())
    # exit_on_exception (default): the task exited with 1 and was restarted
    hard = [r for r in seen(out, "hard") if r.get("event") == "start"]
    assert len({r["pid"] for r in hard}) >= 2
    assert "hard exited with code 1" in executor_log
    # exit_on_exception = False: the task failed the tuple and went on, never restarted
    soft = seen(out, "soft")
    assert sorted(r["n"] for r in soft if "n" in r) == list(range(count))
    assert len({r["pid"] for r in soft}) == 1
    calm = seen(out, "calm")
    assert sorted(r["n"] for r in calm) == list(range(count))
    assert len({r["pid"] for r in calm}) == 1


@pytest.mark.compat("api/tick tuples", "api/BatchingBolt")
@pytest.mark.solo  # ticks about a second apart
@MODES
@pytest.mark.integration
def test_ticks_batching_bolts_and_tickless_batching_bolts(run_project, tmp_path, multilang):
    out, count = tmp_path / "out", 30
    with run_project(PROJECT, "ticks", {"test.out": str(out), "test.count": count},
                     multilang) as running:
        def flushed():
            groups = sorted(n for r in seen(out, "batches") for n in r["ns"])
            timed = sorted(n for r in seen(out, "timed") for n in r["ns"])
            return groups == list(range(count)) and timed == list(range(count)) \
                and len(seen(out, "ticker")) >= 4
        wait_until(flushed, 60, "every tuple batched, and ticks", on_timeout=running.logs)
        wait_until(lambda: len(outcomes(out)) == count, 30, "acks after the batches")
    ticks = seen(out, "ticker")
    assert all((t["component"], t["stream"], t["task"], t["values"]) ==
               ("__system", "__tick", -1, [1]) for t in ticks)
    # One a second: a tick a loaded machine delivers late shortens the next gap as much as
    # it lengthened its own, so the mean gap is judged, and that none is missing.
    gaps = [b["at"] - a["at"] for a, b in zip(ticks, ticks[1:], strict=False)]
    assert 0.5 < sum(gaps) / len(gaps) < 2.0 and max(gaps) < 3.0, gaps
    for batch in seen(out, "batches"):  # grouped by group_key
        assert len({n % 3 for n in batch["ns"]}) == 1
    assert all(events == ["ack"] for events in outcomes(out).values())


@pytest.mark.parametrize(("multilang", "lean"), [
    pytest.param(False, True, id="in-process"),
    pytest.param(False, False, id="in-process-pystorm-loop"),
    # Under multilang only heronbridge.multilang.wake.secs (the spec sets it) wakes the child.
    pytest.param(True, None, id="multilang",
                 marks=pytest.mark.compat("config/heronbridge.multilang.wake.secs"))])
@pytest.mark.integration
def test_a_bolt_awaiting_callbacks_is_woken_without_input_until_it_holds_none(
        run_project, tmp_path, multilang, lean):
    """A bolt that acks only when an outside client calls back (AwaitingBolt: on its
    second wake-up after a tuple came) acks every tuple without further input or tick
    tuples: in-process the runtime calls its wake() as it asks (from its own loop, or
    from pystorm's), a multilang child gets wake ticks while it holds tuples; none goes
    on once it holds none."""
    out, count = tmp_path / "out", 30
    options = {"test.out": str(out), "test.count": count, "topology.message.timeout.secs": 20,
               **({} if lean is None else {"heronbridge.storm.lean": lean})}
    with run_project(PROJECT, "awaiting", options, multilang) as running:
        wait_until(lambda: len(outcomes(out)) == count, 60, "a callback per tuple",
                   on_timeout=running.logs)

        def wakes() -> int:
            return sum(r.get("event") == "wake" for r in seen(out, "waiting"))

        quiet = wakes()
        time.sleep(1.0)  # nothing held: no wake-up comes
        assert wakes() == quiet
    assert all(events == ["ack"] for events in outcomes(out).values())
    assert sorted(r["n"] for r in seen(out, "waiting") if r.get("result") == "ack") == \
        list(range(count))


@pytest.mark.compat("api/ReliableSpout")
@MODES
@pytest.mark.integration
def test_reliable_spout_replays_a_failed_tuple_up_to_max_fails(run_project, tmp_path,
                                                              multilang):
    out, count = tmp_path / "out", 30
    options = {"test.out": str(out), "test.count": count, "test.reject": 5}
    with run_project(PROJECT, "replays", options, multilang) as running:
        wait_until(lambda: sum(e["event"] == "ack" for e in spout_events(out)) >= count, 60,
                   "every tuple acked in the end", on_timeout=running.logs)
    attempts = Counter(r["n"] for r in seen(out, "judge"))
    assert attempts == {n: 3 if n % 5 == 0 else 1 for n in range(count)}  # 1 + max_fails
    fails = Counter(e["id"] for e in spout_events(out) if e["event"] == "fail")
    assert fails == {n: 3 for n in range(0, count, 5)}


@pytest.mark.compat("api/task ids (need_task_ids)")
@MODES
@pytest.mark.integration
def test_need_task_ids_returns_the_tasks_the_tuple_went_to(run_project, tmp_path, multilang):
    out, count = tmp_path / "out", 30
    with run_project(PROJECT, "taskids", {"test.out": str(out), "test.count": count},
                     multilang) as running:
        wait_until(lambda: len(seen(out, "sink")) == count, 60, "every tuple at the sink",
                   on_timeout=running.logs)
        sink_tasks = TaskLayout.of(running.plan).component_tasks["sink"]
    emits_name_the_tasks_that_got_them(out, sink_tasks)


def emits_name_the_tasks_that_got_them(out: Path, sink_tasks: list[int]) -> None:
    got = {r["n"]: r["pid"] for r in seen(out, "sink")}
    by_pid = {}
    for name, rows in read_jsonl(out, "seen-sink-*.jsonl").items():
        for r in rows:
            by_pid[r["pid"]] = int(name.rsplit("-", 1)[1])
    for r in seen(out, "probe"):
        assert r["tasks"] == [by_pid[got[r["n"]]]]
        assert r["tasks"][0] in sink_tasks


@pytest.mark.compat("api/bytes values (as UTF-8 text)")
@MODES
@pytest.mark.integration
def test_values_arrive_after_a_json_round_trip(run_project, tmp_path, multilang):
    out = tmp_path / "out"
    with run_project(PROJECT, "shapes", {"test.out": str(out), "test.count": 3},
                     multilang) as running:
        wait_until(lambda: len(seen(out, "sink")) == 3, 60, "three tuples",
                   on_timeout=running.logs)
    values = sorted((r["values"] for r in seen(out, "sink")), key=lambda v: v[2])
    assert values[1] == ["[1, 2]", "{'1': 'x', 'k': [1, [2, 3]]}", "'n=1'", "'n=1'"]


@pytest.mark.compat("api/component logs", "multilang/log (from a component)",
                    "multilang/error (from a component)", "multilang/metrics (from a component)")
@MODES
@pytest.mark.integration
def test_logging_levels_errors_and_metrics_reach_the_task_log(run_project, tmp_path,
                                                              multilang):
    out = tmp_path / "out"
    options = {"test.out": str(out), "test.count": 3, "test.print": not multilang,
               "pystorm.log.format": "%(asctime)s - %(name)s - %(levelname)s - %(message)s"}
    with run_project(PROJECT, "logs", options, multilang) as running:
        wait_until(lambda: len(seen(out, "talker")) == 3, 60, "three tuples",
                   on_timeout=running.logs)
        talker = TaskLayout.of(running.plan).component_tasks["talker"][0]
        log = running.workdir / "container-0" / "logs" / f"task-{talker}-talker.log"
        wait_until(lambda: "module logger line" in log.read_text(), 10, "the log lines")
        wait_until(lambda: running.metrics()["talker"].get("error-count", 0) >= 1, 10,
                   "the reported error in the metrics")
    text = log.read_text()
    # One prefix, pystorm's, in the format the project asks for: no runtime prefix before it.
    rows = text.splitlines()
    for name, level, line in (("pystorm.component.talker", "INFO", "info line 0"),
                              ("pystorm.component.talker", "WARNING", "warning line 0"),
                              ("pystorm.component.talker", "ERROR", "error line 0"),
                              ("user.module", "WARNING", "module logger line")):
        [row] = [r for r in rows if line in r]
        assert re.fullmatch(rf"{STAMP} - {name} - {level} - {line}", row), row
    # log() sends its message bare: in-process it gets pystorm's prefix too; a multilang
    # child's comes as pystorm sent it.
    [row] = [r for r in rows if "storm log line" in r]
    assert row == "storm log line" if multilang else \
        re.fullmatch(rf"{STAMP} - pystorm.component.talker - WARNING - storm log line", row)
    assert "debug line 0" not in text  # pystorm.log.level is info
    assert ("printed line" in text) is not multilang  # in-process, stdout is the log
    assert "KeyError" in text and "reported" in text


SPOUT_STATE = ("multilang/activate (to a spout)", "multilang/deactivate (to a spout)")


@pytest.mark.compat(*SPOUT_STATE)
@MODES
@pytest.mark.integration
def test_spouts_see_activate_and_deactivate(run_project, tmp_path, state, multilang):
    out = tmp_path / "out"
    with run_project(PROJECT, "acking", {"test.out": str(out), "test.count": 10**6},
                     multilang=multilang) as running:
        wait_until(lambda: any(e["event"] == "emit" for e in spout_events(out)), 30, "emits")
        control.set_state(state, running.plan.name, running=False)
        wait_until(lambda: any(e["event"] == "deactivate" for e in spout_events(out)), 10,
                   "deactivate")
        time.sleep(0.5)
        emitted = sum(e["event"] == "emit" for e in spout_events(out))
        time.sleep(1.0)
        assert sum(e["event"] == "emit" for e in spout_events(out)) == emitted
        control.set_state(state, running.plan.name, running=True)
        wait_until(lambda: sum(e["event"] == "emit" for e in spout_events(out)) > emitted, 10,
                   "emits after activate")
    events = [e["event"] for e in spout_events(out) if e["event"] in ("activate", "deactivate")]
    # Killing the topology deactivates its spouts first, as Storm does (a multilang child
    # hears it before it is stopped).
    assert events == ["activate", "deactivate", "activate", "deactivate"]


@pytest.mark.integration
def test_a_multilang_child_dies_with_its_task_and_comes_back_with_it(run_project, tmp_path):
    """Even a child busy in process(), not reading the pipe its task held, goes when its
    task is SIGKILLed; the restarted task starts a new one."""
    import psutil

    out = tmp_path / "out"
    options = {"test.out": str(out), "test.count": 10**6, "test.stall.secs": 300}
    with run_project(PROJECT, "acking", options, multilang=True) as running:
        wait_until(lambda: seen(out, "judge"), 30, "a tuple at the judge",
                   on_timeout=running.logs)
        [first] = seen(out, "judge")
        child = psutil.Process(first["pid"])
        task = child.parent()
        assert "heronbridge.runtime.instance" in task.cmdline()
        task.kill()
        wait_until(lambda: not child.is_running() or child.status() == psutil.STATUS_ZOMBIE,
                   10, "the child to die with its task")
        wait_until(lambda: len(seen(out, "judge")) > 1, 30, "the restarted judge's tuple",
                   on_timeout=running.logs)
        assert seen(out, "judge")[1]["pid"] != child.pid


@pytest.mark.integration
def test_the_subprocess_timeout_counts_from_the_handshake_and_kills_a_silent_child(
        run_project, tmp_path):
    """As Storm's ShellProcess.launch, the handshake waits however long the child's imports
    take (here longer than the timeout); after it, a child silent for the timeout (stalled
    in process(), not answering heartbeats) is killed, and its tuple failed back. The
    timeout is short, not so short that a loaded machine's healthy children miss it."""
    import shutil

    project, out = tmp_path / "project", tmp_path / "out"
    shutil.copytree(PROJECT, project, ignore=shutil.ignore_patterns("__pycache__"))
    bolts = project / "src" / "parts" / "bolts.py"
    bolts.write_text("import time\ntime.sleep(8)\n" + bolts.read_text())
    options = {"test.out": str(out), "test.count": 1, "test.stall.secs": 300,
               "topology.subprocess.timeout.secs": 5}
    with run_project(project, "acking", options, multilang=True) as running:
        wait_until(lambda: seen(out, "judge"), 60, "a tuple at the judge after slow imports",
                   on_timeout=running.logs)
        wait_until(lambda: "no message for" in running.logs(), 30, "the stalled judge killed",
                   on_timeout=running.logs)
        wait_until(lambda: outcomes(out) == {0: ["fail"]}, 60, "its tuple failed back",
                   on_timeout=running.logs)
        logs = running.logs()
    assert re.search(r"component 'judge', task \d+ \(multilang subprocess .*\): no message "
                     r"for \d+s \(topology.subprocess.timeout.secs is 5\); killing it", logs)
    assert not re.search(r"component '(passing|numbers)'.*no message for", logs)


@pytest.mark.integration
def test_a_message_hook_sees_every_message_and_may_answer_for_the_component(
        run_project, tmp_path):
    out, count = tmp_path / "out", 40
    options = {"test.out": str(out), "test.count": count, "test.reject": 10**6,
               "heronbridge.storm.hook": "parts.hook:Recording"}
    with run_project(PROJECT, "acking", options) as running:
        wait_until(lambda: len(outcomes(out)) == count, 60, "a callback per tuple",
                   on_timeout=running.logs)
    judge = read_jsonl(out, "hook-judge-*.jsonl")
    [records] = judge.values()
    assert "context" in records[0]["msg"] and records[0]["dir"] == "down"
    downs = [r["msg"] for r in records if r["dir"] == "down" and "tuple" in r["msg"]]
    ups = [r["msg"] for r in records if r["dir"] == "up"]
    assert len(downs) == count
    # The hook failed every 5th tuple itself; the bolt saw the others (and, as the judge
    # does, failed n == 0 and acked the rest).
    passed = [m for i, m in enumerate(downs, 1) if i % 5]
    hooked = {m["tuple"][0] for i, m in enumerate(downs, 1) if i % 5 == 0}
    assert sorted(m["id"] for m in ups if m.get("command") == "ack") == \
        sorted(m["id"] for m in passed if m["tuple"][0] != 0)
    failed = {n for n, events in outcomes(out).items() if events == ["fail"]}
    assert len(hooked) == count // 5
    assert failed == hooked | {0}



PLAIN = ("grouping/shuffle", "grouping/fields", "grouping/all", "grouping/global",
         "grouping/none", "api/message timeouts", "api/max spout pending")
GROUPINGS = (*PLAIN, "grouping/local_or_shuffle", "grouping/partial_key", "grouping/direct",
             "api/direct emits", "api/named streams")
# What Storm's ShellSpout and ShellBolt say to, and hear from, the project's components;
# Storm's partial key grouping is a custom grouping (customGrouping, a Java object); the
# run ends by killing the topology, which deactivates its spouts first.
STORM_SIDE = ("multilang/next (to a spout)", "multilang/ack (to a spout)",
              "multilang/fail (to a spout)", *SPOUT_STATE,
              "multilang/error (from a component)", "multilang/fail (from a component)",
              "api/component logs", "grouping/custom")


BYTES = "api/bytes values (as UTF-8 text)"


@pytest.mark.parametrize("system", [
    pytest.param("multilang", marks=pytest.mark.compat(*GROUPINGS, BYTES, on="multilang")),
    pytest.param("storm", marks=[pytest.mark.conformance,
                                 pytest.mark.compat(*GROUPINGS, *STORM_SIDE, BYTES,
                                                    on="storm")]),
    # The codemod's copy of plain_groupings.py (what heronpy has of groupings.py).
    pytest.param("heronpy", marks=[
        pytest.mark.compat(*PLAIN, "heronpy/groupings", "api/component logs", on="heronpy"),
        pytest.mark.compat("grouping/local_or_shuffle", on="heronpy",
                           partly="the codemod makes it a shuffle grouping: no preference "
                                  "for tasks in the spout's own container")])])
@pytest.mark.integration
def test_every_grouping_direct_stream_timeout_and_pending_cap(run_project, tmp_path, system,
                                                             request):
    """One run of the groupings topology: each subscriber gets what its grouping says, the
    direct stream reaches the task it names, the tuples a bolt leaves unacked time out
    and fail back to the spout, and no more than topology.max.spout.pending are in flight;
    bytes a spout emits arrive as the UTF-8 text they hold."""
    out, count, cap = tmp_path / "out", 40, 4
    options = {"test.out": str(out), "test.count": count, "topology.max.spout.pending": cap,
               "topology.message.timeout.secs": 3}
    if system == "storm":
        # Ended as `storm kill -w 10` ends it: spouts deactivated, 10 s, then removed. The
        # worker hears of the kill through ZooKeeper within about a second; the wait leaves
        # a loaded machine room before the spout is stopped.
        run = run_on_storm_until_done(request, options, tmp_path / "run", kill_wait=10)
        assert run.killed
        worker_log = run.java_log.read_text(errors="replace")
        assert "dropper log line" in worker_log and "dropper logger line" in worker_log
        assert "KeyError: 'reported'" in worker_log  # the error, with its traceback
    else:
        if system == "heronpy":
            running = run_migrated(request, "plain_groupings", options)
        else:
            running = run_project(PROJECT, "groupings", options, multilang=True)
        with running:
            wait_until(lambda: len(outcomes(out)) == count, 60, "a callback per tuple",
                       on_timeout=running.logs)
            if system == "heronpy":  # heronpy's logger, in the task's log
                [dropper] = TaskLayout.of(running.plan).component_tasks["dropper"]
                log = running.workdir / "container-0" / "logs" / f"task-{dropper}-dropper.log"
                wait_until(lambda: "dropper logger line" in log.read_text(), 10,
                           "the dropper's log line")
    records = {name.split("-", 1)[1]: rows for name, rows in read_jsonl(out).items()
               if name.startswith("seen-")}

    def got(component):  # {task: [n, ...]}
        return {int(k.rsplit("-", 1)[1]): sorted(r["n"] for r in rows)
                for k, rows in records.items() if k.rsplit("-", 1)[0] == component}

    every, plain = list(range(count)), system == "heronpy"
    if not plain:  # as pystorm's encoder writes them, on Storm as here
        assert sorted(n for ns in got("texted").values() for n in ns) == \
            sorted(f"dog-{n}" for n in every)
    for once in ("shuffled", "noned", "localed", "fielded", *(() if plain else ("partialed",))):
        tasks = got(once)
        assert sorted(n for ns in tasks.values() for n in ns) == every, once
    assert len({task for task, ns in got("shuffled").items() if ns}) == 2  # both tasks
    assert all(ns == every for ns in got("everyone").values()) and len(got("everyone")) == 2
    globaled = got("globaled")
    assert globaled[min(globaled)] == every and not any(globaled[t] for t in globaled
                                                        if t != min(globaled))
    if not plain:
        sinks = got("sink")
        assert {n: t for t, ns in sinks.items() for n in ns} == \
            {n: sorted(sinks)[n % len(sinks)] for n in every}
        assert {r["stream"] for rows in records.values() for r in rows} == {"default", "routed"}
    # the dropped tenth timed out and failed at the spout; everything else was acked
    assert outcomes(out) == {n: ["fail"] if n % 10 == 0 else ["ack"] for n in every}
    in_flight, most = 0, 0
    for event in spout_events(out):
        in_flight += {"emit": 1, "ack": -1, "fail": -1}.get(event["event"], 0)
        most = max(most, in_flight)
    assert most == cap
    events = [e["event"] for e in spout_events(out)]
    assert events[0] == "activate"
    if system == "storm":
        # The kill came after the last emit: the spout heard "deactivate" once, after it.
        assert [e for e in events if e in ("activate", "deactivate")] == \
            ["activate", "deactivate"], events
        assert events.index("deactivate") > max(i for i, e in enumerate(events)
                                                if e == "emit"), events


def run_on_storm_until_done(request, options, run_dir, kill_wait=None):
    from heronbridge.compat.streamparse import load_project
    from heronbridge.conformance.scenario import Scenario
    from heronbridge.conformance.storm import run_on_storm

    install = request.getfixturevalue("storm_install")
    scenario = Scenario(name="groupings", project=PROJECT, topology="groupings", tuples=None,
                        options=options, quiet=3.0, timeout=150.0)
    project = load_project(PROJECT, "groupings", None, scenario.storm_options())
    run = run_on_storm(project, scenario, run_dir, install=install, kill_wait=kill_wait)
    assert run.finished, run.explanation
    return run


MIGRATED: list[Path] = []  # the project's migrated copy, made once per process


def migrated_project(factory: pytest.TempPathFactory) -> Path:
    """A copy of the project, migrated to heronpy by the codemod."""
    import shutil

    from heronbridge.migrate.runner import migrate

    def unused(folder: str, names: list[str]) -> set[str]:  # less for the codemod to read
        kept = {"groupings.py", "plain_groupings.py", "taskids.py"} \
            if folder.endswith("topologies") \
            else set(names) - {"hook.py", "__pycache__"}
        return set(names) - kept

    if not MIGRATED:
        copy = factory.mktemp("migrated") / "project"
        shutil.copytree(PROJECT, copy, ignore=unused)
        outcome = migrate(copy, jobs=1)
        assert outcome.changed and not outcome.failed, outcome.failed
        MIGRATED.append(copy)
    return MIGRATED[0]


def run_migrated(request, topology, options):
    from testkit import Running

    from heronbridge.compat.projects import load_project

    home, state = request.getfixturevalue("home"), request.getfixturevalue("state")
    copy = migrated_project(request.getfixturevalue("tmp_path_factory"))
    project = load_project(copy, topology, options=options,
                           resources=home.workdir(topology) / "resources")
    return Running(project.plan, home, state, project)


@pytest.mark.compat("grouping/partial_key", "grouping/direct", "api/direct emits",
                    "grouping/custom", on="heronpy")
@pytest.mark.xfail(strict=True, raises=Unported,
                   reason="the codemod refuses direct streams, the direct grouping and Storm's "
                          "Java groupings (HB006)")
def test_the_migrated_groupings_topology_loads(tmp_path, tmp_path_factory):
    from heronbridge.compat.projects import load_project

    load_project(migrated_project(tmp_path_factory), "groupings",
                 resources=tmp_path / "resources")


@pytest.mark.compat("api/task ids (need_task_ids)", on="heronpy")
@pytest.mark.integration
def test_need_task_ids_returns_the_tasks_the_tuple_went_to_when_migrated(request, tmp_path):
    """The codemod marks the read (HB005: Heron's own heronpy returns ids for direct and
    custom groupings only); heronpy hosted here returns them as pystorm does."""
    out, count = tmp_path / "out", 10
    running = run_migrated(request, "taskids", {"test.out": str(out), "test.count": count})
    with running:
        wait_until(lambda: len(seen(out, "sink")) == count, 60, "every tuple at the sink",
                   on_timeout=running.logs)
        sink_tasks = TaskLayout.of(running.plan).component_tasks["sink"]
    emits_name_the_tasks_that_got_them(out, sink_tasks)


def test_a_java_custom_grouping_loads_with_a_python_sender(tmp_path):
    """Storm's customGrouping (a JavaObject) on a Python sender's stream becomes the JVM
    grouping host's spec; tests/jvm/test_java_groupings.py runs it."""
    from heronbridge.compat.projects import load_project

    plan = load_project(PROJECT, "custom", multilang=True, resources=tmp_path).plan
    grouping = plan.components["customed"].inputs[0].grouping
    assert (grouping.kind, grouping.custom) == \
        ("custom", '{"class": "org.apache.storm.grouping.ShuffleGrouping", "args": []}')
