"""A process that keeps failing is restarted less and less often (the log and the task's
metrics say so), an executor that keeps failing backs off too, and every process log and
metrics.jsonl rotate at the configured size."""

from __future__ import annotations

import re
import sys
import time

import pytest
from fault_components import AlwaysFailsBolt, TalkativeBolt
from rt_components import KeySpout
from testkit import wait_until

from heronbridge.runtime import TopologyBuilder, control
from heronbridge.runtime.logfiles import LOG_DIR_ENV, RotatingOutput, read_log, rotated
from heronbridge.runtime.metrics_manager.sink import latest_samples
from heronbridge.runtime.plan import TaskLayout
from heronbridge.runtime.scheduler import local
from heronbridge.runtime.scheduler.restarts import MAX_BACKOFF_SECS, Backoff
from heronbridge.runtime.telemetry import RESTART_WAIT_SECS
from heronbridge.shims.common import logs


def test_the_wait_doubles_with_each_quick_failure_up_to_a_cap_and_resets_once_stable():
    backoff = Backoff(0.5, stable_after=10)
    waits = [backoff.after_exit(1.0) for _ in range(9)]
    assert waits == [0.5, 1, 2, 4, 8, 16, MAX_BACKOFF_SECS, MAX_BACKOFF_SECS, MAX_BACKOFF_SECS]
    assert backoff.after_exit(10.0) == 0.5 and backoff.failures == 0  # ran long enough
    assert backoff.after_exit(0.1) == 0.5 and backoff.after_exit(0.1) == 1


def test_no_rotated_file_passes_the_size_and_lines_stay_whole(tmp_path):
    out = RotatingOutput(tmp_path / "x.log", 100, 2)
    lines = [f"line {n:03d} {'x' * 20}\n".encode() for n in range(40)]
    for i in range(0, 40, 7):
        out.write(b"".join(lines[i:i + 7]))
    out.close()
    parts = rotated(tmp_path / "x.log")
    assert [p.name for p in parts] == ["x.log.2", "x.log.1", "x.log"]
    assert all(p.stat().st_size <= 100 for p in parts)
    kept = b"".join(p.read_bytes() for p in parts)
    assert kept == b"".join(lines[-len(kept.splitlines()):])  # the newest, whole, in order


def test_a_log_is_read_on_from_an_offset_and_only_a_regular_file_is_read(tmp_path):
    """What a stream manager answers a log request with: the end first, then from where
    it ended; a rotated file from its start; no link, no folder, nothing missing."""
    log = tmp_path / "task-1-c.log"
    log.write_bytes(b"0123456789")
    assert read_log(log, -1, 4) == (6, b"6789")
    assert read_log(log, 10, 4) == (10, b"")
    log.write_bytes(b"new")  # rotated: shorter than the offset reached
    assert read_log(log, 10, 4) == (0, b"new")
    (tmp_path / "link.log").symlink_to(log)
    assert read_log(tmp_path / "link.log", 0, 4) is None
    assert read_log(tmp_path, 0, 4) is None
    assert read_log(tmp_path / "none.log", 0, 4) is None


def test_a_task_is_told_its_log_folder(tmp_path, monkeypatch):
    monkeypatch.setenv(LOG_DIR_ENV, str(tmp_path))
    assert logs.task_log_dir() == tmp_path
    monkeypatch.delenv(LOG_DIR_ENV)
    monkeypatch.chdir(tmp_path / "..")
    assert logs.task_log_dir() in (tmp_path.parent, tmp_path.parent.resolve())  # no file: cwd


def test_the_log_settings_of_a_streamparse_env_apply_to_task_logs():
    from heronbridge.runtime.config import LOG_BACKUP_COUNT, LOG_MAX_BYTES

    class Plan:
        config = {logs.MAX_BYTES: 1_000_000, logs.BACKUP_COUNT: 3}
        components = {"c": type("Spec", (), {"config": {logs.BACKUP_COUNT: 0}})()}

    logs.check_plan(Plan)
    assert Plan.config[LOG_MAX_BYTES] == 1_000_000 and Plan.config[LOG_BACKUP_COUNT] == 3
    assert LOG_BACKUP_COUNT not in Plan.components["c"].config  # 0: pystorm never rotates


@pytest.mark.compat("config/heronbridge.restart.backoff.secs")
@pytest.mark.integration
@pytest.mark.solo  # the backoff doubles only while each run stays short
def test_a_task_that_keeps_failing_waits_longer_each_time(run_topology, state, tmp_path):
    b = TopologyBuilder("crashloop", {"test.out": str(tmp_path), "test.count": 10**6,
                                      "test.interval": 0.01,
                                      "heronbridge.restart.backoff.secs": 0.2})
    b.spout("keys", KeySpout)
    b.bolt("fails", AlwaysFailsBolt, inputs=["keys"])
    plan = b.build()
    task = TaskLayout.of(plan).component_tasks["fails"][0]
    with run_topology(plan) as running:
        executor_log = running.workdir / "container-0" / "executor.log"
        waits = wait_until(lambda: len(found := re.findall(
            r"task-\d+-fails exited with code 1 after [\d.]+s; restarting in ([\d.]+)s",
            executor_log.read_text())) >= 4 and found, 60, "four restarts",
            on_timeout=running.logs)
        assert [float(w) for w in waits[:4]] == [0.2, 0.4, 0.8, 1.6]
        assert "failure 3 in a row: the wait doubles with each, up to 30s, until it runs " \
               "10s" in executor_log.read_text()
        # Between two lives the task's metrics say it waits, and for which incarnation.
        sample = wait_until(lambda: next(
            (t for t in control.metrics(state, plan.name).tasks
             if t.task_id == task and RESTART_WAIT_SECS in t.gauges), None), 30,
            "a metrics sample of the wait", interval=0.05)
        assert sample.gauges[RESTART_WAIT_SECS] >= 0.4 and sample.incarnation >= 2


@pytest.mark.integration
def test_an_executor_that_keeps_failing_is_restarted_later_each_time(tmp_path, monkeypatch,
                                                                      caplog):
    b = TopologyBuilder("crashes", {"heronbridge.restart.backoff.secs": 0.2})
    b.spout("keys", KeySpout)
    plan = b.build()
    home = local.Home(tmp_path / "home")
    state = home.open_statemgr()
    local.submit_plan(state, home, plan)
    # An executor that dies at once, every time.
    monkeypatch.setattr(local, "module_command",
                        lambda *_: [sys.executable, "-c", "raise SystemExit(3)"])
    supervisor = local.Supervisor(state, home, plan.name)
    supervisor.start()
    starts, deadline = [time.monotonic()], time.monotonic() + 3.2
    try:
        while time.monotonic() < deadline:
            if supervisor.check():
                starts.append(time.monotonic())
            time.sleep(0.01)
    finally:
        supervisor.stop()
    gaps = [b - a for a, b in zip(starts, starts[1:], strict=False)]
    # 0.2, 0.4, 0.8, 1.6 s: never faster than the back-off allows (at most 5 in 3.2 s).
    assert 3 <= len(gaps) <= 4, gaps
    assert all(gap >= 0.2 * 2 ** n for n, gap in enumerate(gaps)), gaps
    assert "failure 3 in a row: the wait doubles with each, up to 30s, until it runs 10s" \
        in caplog.text


@pytest.mark.compat("config/heronbridge.log.max.bytes", "config/heronbridge.log.backup.count",
                    "config/heronbridge.metrics.interval.secs")
@pytest.mark.integration
def test_process_logs_and_metrics_rotate_at_the_configured_size(run_topology, tmp_path):
    b = TopologyBuilder("rotates", {
        "test.out": str(tmp_path), "test.count": 10**6, "test.interval": 0.002,
        "heronbridge.log.max.bytes": 8192, "heronbridge.log.backup.count": 2,
        "heronbridge.metrics.interval.secs": 0.05})
    b.spout("keys", KeySpout)
    b.bolt("talks", TalkativeBolt, inputs=["keys"])
    plan = b.build()
    task = TaskLayout.of(plan).component_tasks["talks"][0]
    with run_topology(plan) as running:
        container = running.workdir / "container-0"
        log = container / "logs" / f"task-{task}-talks.log"
        wait_until(lambda: len(rotated(log)) == 3 and len(rotated(
            container / "metrics.jsonl")) == 3, 60, "both to rotate twice",
            on_timeout=running.logs)
        wait_until(lambda: [p.name for p in rotated(log)] == [f"{log.name}.2",
                                                              f"{log.name}.1", log.name]
                   and not (container / "logs" / f"{log.name}.3").exists(), 10, "two backups")
        for path in (*rotated(log), *rotated(container / "metrics.jsonl")):
            assert path.stat().st_size <= 8192, path
        assert all(line.startswith(("tuple ", "\n", "===")) or " INFO " in line
                   for p in rotated(log) for line in p.read_text().splitlines(keepends=True))
        # Read while the topology runs: three 8 KB parts hold about a second of samples,
        # and under load a task's last sample can be older than that.
        wait_until(lambda: {c for c, _, _ in latest_samples(running.workdir)}
                   >= {"keys", "talks", "__stmgr__"}, 30,
                   "the rotated sinks to hold a sample of every component")
