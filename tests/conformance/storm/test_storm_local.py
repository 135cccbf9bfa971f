"""Storm's local-mode command and its end by a kill, without a JVM: the command line each
way, and LocalStorm's side of the kill against stand-in processes."""

from __future__ import annotations

import sys
from pathlib import Path

from heronbridge.conformance.storm import local_storm
from heronbridge.conformance.storm.local_storm import (
    KILLED,
    KILLING_LOCAL_CLUSTER,
    LOCAL_CLUSTER,
    LocalStorm,
    storm_command,
)


def command(tmp_path: Path, kill_wait: int | None = None) -> list[str]:
    return storm_command(Path("/jdk/bin/java"), [Path("/a.jar")], tmp_path / "t.jar",
                         tmp_path / "topology.yaml", 450, tmp_path, kill_wait)


def test_the_command_is_storm_local_unless_a_kill_is_asked_for(tmp_path):
    plain = command(tmp_path)
    assert plain[-4:] == [LOCAL_CLUSTER, local_storm.FLUX, "--no-splash",
                          str(tmp_path / "topology.yaml")]
    assert KILLING_LOCAL_CLUSTER not in plain
    killing = command(tmp_path, kill_wait=7)
    assert killing[-5:] == [KILLING_LOCAL_CLUSTER, "7", local_storm.FLUX, "--no-splash",
                            str(tmp_path / "topology.yaml")]
    assert killing[:-5] == plain[:-4]  # same JVM, classpath and properties


def stand_in(tmp_path: Path, script: str) -> LocalStorm:
    """A LocalStorm whose `JVM` is a Python script; the killing main's name in its
    arguments makes LocalStorm give it a stdin to read the kill from."""
    return LocalStorm([sys.executable, "-c", script, KILLING_LOCAL_CLUSTER], tmp_path / "log",
                      {}, tmp_path)


def test_a_kill_is_asked_on_stdin_and_done_when_the_jvm_says_so_and_exits(tmp_path):
    storm = stand_in(tmp_path, f"import sys; assert sys.stdin.readline() == 'kill\\n'; "
                               f"print({KILLED!r})")
    storm.start()
    try:
        assert storm.kill_topology(10) == ""
    finally:
        assert storm.stop() == 0


def test_a_kill_that_does_not_end_the_jvm_in_time_or_cleanly_is_reported(tmp_path):
    storm = stand_in(tmp_path, "import sys, time; sys.stdin.readline(); time.sleep(60)")
    storm.start()
    try:
        assert "exit within 0.5s of being asked, it was still running" in \
            storm.kill_topology(0.5)
    finally:
        storm.stop()
    storm = stand_in(tmp_path, "import sys; sys.stdin.readline(); sys.exit(3)")
    storm.start()
    try:
        assert f"expected Storm's JVM to log {KILLED!r} and exit with code 0 after killing " \
               "the topology, it exited with code 3" in storm.kill_topology(10)
    finally:
        storm.stop()


def test_without_a_kill_the_jvm_reads_nothing(tmp_path):
    storm = LocalStorm([sys.executable, "-c", "import sys; print(repr(sys.stdin.read()))"],
                       tmp_path / "log", {}, tmp_path)
    storm.start()
    try:
        assert storm.proc.wait(10) == 0
        assert storm.log.read_text().strip() == "''"  # /dev/null, as before
        assert "not started by a killing command" in storm.kill_topology(1)
    finally:
        storm.stop()
