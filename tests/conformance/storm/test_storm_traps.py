"""Reading Storm's log: the fatal events of real local-mode runs (excerpts in logs/),
explained with the component, its task and what to do."""

from __future__ import annotations

from pathlib import Path

import pytest

from heronbridge.conformance.storm import traps
from heronbridge.conformance.storm.log_watch import LogWatch

LOGS = Path(__file__).resolve().parent / "logs"


def log(name: str) -> str:
    return (LOGS / name).read_text()


def test_direct_emit_cast():
    trap = traps.diagnose(log("direct_emit_cast.log"), None, "2.8.3")
    assert (trap.kind, trap.component, trap.task) == (traps.DIRECT_EMIT_CAST, "router", 6)
    assert "Storm 2.8.3" in trap.explanation
    assert "direct=True" in trap.explanation
    assert "Halting process: ShellBolt died" in trap.evidence


def test_unregistered_metric():
    trap = traps.diagnose(log("unregistered_metric.log"), None, "2.8.3")
    assert (trap.kind, trap.component, trap.task) == (traps.UNREGISTERED_METRIC, "count_bolt", 2)
    assert "'words_seen'" in trap.explanation
    assert "report_metric" in trap.explanation


def test_python_exception_with_its_traceback():
    trap = traps.diagnose(log("bolt_raised.log"), None, "2.8.3")
    assert (trap.kind, trap.component, trap.task) == (traps.PYTHON_EXCEPTION, "count_bolt", 2)
    assert "raised ValueError: no harbours here" in trap.explanation
    assert "exit code 1" in trap.explanation
    assert 'raise ValueError("no harbours here")' in trap.explanation


def test_a_component_that_never_started_shows_its_stderr():
    trap = traps.diagnose(log("missing_script.log"), None, "2.8.3")
    assert (trap.kind, trap.component, trap.task) == (traps.NOT_STARTED, "count_bolt", 2)
    assert "can't open file" in trap.explanation
    assert "no_such_script" in trap.explanation


def test_spout_heartbeat_timeout():
    trap = traps.diagnose(log("spout_heartbeat_timeout.log"), None, "2.8.3")
    assert (trap.kind, trap.component, trap.task) == (traps.HEARTBEAT_TIMEOUT, "word_spout", 4)
    assert trap.explanation.startswith("spout 'word_spout' (task 4)")
    assert "topology.subprocess.timeout.secs" in trap.explanation


def test_flux_failing_to_build_the_topology():
    trap = traps.diagnose(log("flux_class_not_found.log"), 1, "2.8.3")
    assert trap.kind == traps.NOT_SUBMITTED
    assert "ClassNotFoundException: org.apache.storm.flux.wrappers.bolts.NoSuchBolt" in \
        trap.explanation


def test_a_clean_log_is_no_trap_unless_the_jvm_exited():
    assert traps.diagnose(log("clean_run.log"), None, "2.8.3") is None
    trap = traps.diagnose(log("clean_run.log"), 3, "2.8.3")
    assert trap.kind == traps.JVM_EXIT
    assert "exited with code 3" in trap.explanation


def test_exit_code_11_is_a_spout_timeout():
    trap = traps.diagnose(log("clean_run.log"), 11, "2.8.3")
    assert trap.kind == traps.SPOUT_EXIT
    assert "topology.subprocess.timeout.secs" in trap.explanation


def test_only_the_first_fatal_event_counts():
    # The spout's timeout came first; the bolts' broken pipes after it are consequences.
    text = log("spout_heartbeat_timeout.log")
    assert text.count("Halting process") > 1
    assert traps.diagnose(text, None, "2.8.3").component == "word_spout"


def test_component_logs_at_error_level_are_not_fatal():
    line = ("15:16:54.942 [Thread-43] ERROR o.a.s.t.ShellBolt - ShellLog pid:11342, "
            "name:count_bolt Halting process: not really\n")
    assert traps.diagnose(line, None, "2.8.3") is None


@pytest.mark.parametrize("name", ["direct_emit_cast.log", "unregistered_metric.log",
                                  "bolt_raised.log", "missing_script.log",
                                  "spout_heartbeat_timeout.log", "flux_class_not_found.log"])
def test_the_log_watch_sees_the_fatal_line_as_it_is_written(tmp_path, name):
    path = tmp_path / "java.log"
    watch = LogWatch(path)
    assert watch.poll() is None  # no file yet
    seen = None
    with path.open("w") as f:
        for line in log(name).splitlines(keepends=True):
            # half a line first: nothing is judged before its end is written
            f.write(line[:10])
            f.flush()
            assert watch.poll() is None or seen is not None
            f.write(line[10:])
            f.flush()
            found = watch.poll()
            if found is not None and seen is None:
                seen = found
                assert found == line.rstrip("\n")
    assert seen is not None


def test_the_log_watch_ignores_a_clean_log(tmp_path):
    path = tmp_path / "java.log"
    path.write_text(log("clean_run.log"))
    assert LogWatch(path).poll() is None


def test_an_injected_exit_is_the_scenarios_doing(tmp_path):
    from heronbridge.conformance.trace import tracefile
    from heronbridge.conformance.trace.progress import Progress

    def trace(component: str, task: int, pid: int, *records: dict) -> None:
        tracefile.write_records(tmp_path / tracefile.file_name(component, task, pid),
                                {"component": component, "task": task, "pid": pid,
                                 "t": 1.0}, list(records))

    trace("checker", 2, 4242, {"t": 1.0, "ev": "start", "pid": 4242, "tasks": {}},
          {"t": 2.0, "ev": "exit", "reason": "injected"})
    trace("numbers", 3, 4243, {"t": 1.0, "ev": "start", "pid": 4243, "tasks": {}})
    exits = Progress(tmp_path).exits()
    assert exits == [("checker", 2)]
    death = traps.diagnose(log("bolt_raised.log"), None, "2.8.3")
    trap = traps.injected_exit(exits, death)
    assert (trap.kind, trap.component, trap.task) == (traps.INJECTED_EXIT, "checker", 2)
    assert "exit fault ended component 'checker' (task 2)" in trap.explanation
    assert "known divergence" in trap.explanation
