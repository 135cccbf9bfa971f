"""Storm's local mode as one JVM process group: started, watched, and stopped with every
process it started.

The JVM leads a session of its own, so its multilang children (tracing proxies,
components) share its process group and go with it; and it dies with its parent, so not
even a parent killed by SIGKILL leaves it behind.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from heronbridge.runtime.procfs import group_members
from heronbridge.runtime.scheduler.processes import die_with_parent

from .errors import StormError

LOCAL_CLUSTER = "org.apache.storm.LocalCluster"
FLUX = "org.apache.storm.flux.Flux"
# A heap bound on a shared machine; Storm's local mode needs far less for our topologies.
JVM_OPTIONS = ["-Xmx1g", "-XX:+UseSerialGC"]
TERM_GRACE = 5.0  # seconds between SIGTERM and SIGKILL
KILL_WAIT = 10.0


def storm_command(java: Path, classpath: list[Path], jar: Path, flux_yaml: Path,
                  sleep_secs: int, tmp: Path) -> list[str]:
    """`storm local` without the storm script: LocalCluster runs Flux's main in-process.
    The topology's jar comes first on the classpath (its resources/ must win)."""
    return [str(java), *JVM_OPTIONS,
            "-cp", os.pathsep.join(str(p) for p in [jar, *classpath]),
            f"-Dstorm.jar={jar}", f"-Dstorm.local.sleeptime={sleep_secs}",
            f"-Djava.io.tmpdir={tmp}",  # ZooKeeper's and the supervisor's folders
            LOCAL_CLUSTER, FLUX, "--no-splash", str(flux_yaml)]


class LocalStorm:
    def __init__(self, command: list[str], log: Path, env: dict[str, str], cwd: Path) -> None:
        self.command = command
        self.log = log
        self.env = env
        self.cwd = cwd  # relative paths in Storm's defaults land here
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log.open("wb") as out:
            try:
                self.proc = subprocess.Popen(
                    self.command, stdin=subprocess.DEVNULL, stdout=out,
                    stderr=subprocess.STDOUT, env=self.env, cwd=self.cwd,
                    start_new_session=True,
                    preexec_fn=die_with_parent())
            except OSError as exc:
                msg = f"cannot start Storm's JVM ({self.command[0]}): {exc}"
                raise StormError(msg) from exc

    def exit_code(self) -> int | None:
        return None if self.proc is None else self.proc.poll()

    def stop(self) -> int | None:
        """Stop the JVM and every process of its group; the JVM's exit code if it had
        ended on its own before."""
        if self.proc is None:
            return None
        code = self.proc.poll()
        group = self.proc.pid
        _signal_group(group, signal.SIGTERM)
        self._wait_group(TERM_GRACE)
        if group_members(group) or self.proc.poll() is None:
            _signal_group(group, signal.SIGKILL)
        self._wait_group(KILL_WAIT)
        left = group_members(group)
        if left:
            msg = f"processes of Storm's JVM (group {group}) outlived SIGKILL: {left}"
            raise StormError(msg)
        return code

    def _wait_group(self, seconds: float) -> None:
        """Up to `seconds` each for the JVM to exit and the rest of its group after it."""
        try:
            self.proc.wait(seconds)
        except subprocess.TimeoutExpired:
            pass
        deadline = time.monotonic() + seconds
        while group_members(self.proc.pid) and time.monotonic() < deadline:
            time.sleep(0.1)

    def __enter__(self) -> LocalStorm:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _signal_group(group: int, sig: int) -> None:
    try:
        os.killpg(group, sig)
    except (ProcessLookupError, PermissionError):
        pass
