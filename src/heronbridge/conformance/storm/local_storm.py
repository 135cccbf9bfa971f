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
# Our LocalCluster main that ends a run by killing the topology (java/heronbridge/storm/).
KILLING_LOCAL_CLUSTER = "heronbridge.storm.KillingLocalCluster"
KILLED = "heronbridge: topologies killed"  # what it logs once Nimbus has removed them
# A heap bound on a shared machine; Storm's local mode needs far less for our topologies.
JVM_OPTIONS = ["-Xmx1g", "-XX:+UseSerialGC"]
TERM_GRACE = 5.0  # seconds between SIGTERM and SIGKILL
KILL_WAIT = 10.0


def storm_command(java: Path, classpath: list[Path], jar: Path, flux_yaml: Path,
                  sleep_secs: int, tmp: Path, kill_wait: int | None = None) -> list[str]:
    """`storm local` without the storm script: LocalCluster runs Flux's main in-process.
    The topology's jar comes first on the classpath (its resources/ must win).

    With `kill_wait`, our KillingLocalCluster runs it instead (the suite's extensions must
    be on the classpath): a line on its stdin kills the topology with that wait, as
    `storm kill -w` does, before local mode stops (LocalStorm.kill_topology)."""
    main = [LOCAL_CLUSTER] if kill_wait is None else [KILLING_LOCAL_CLUSTER, str(kill_wait)]
    return [str(java), *JVM_OPTIONS,
            "-cp", os.pathsep.join(str(p) for p in [jar, *classpath]),
            f"-Dstorm.jar={jar}", f"-Dstorm.local.sleeptime={sleep_secs}",
            f"-Djava.io.tmpdir={tmp}",  # ZooKeeper's and the supervisor's folders
            *main, FLUX, "--no-splash", str(flux_yaml)]


class LocalStorm:
    def __init__(self, command: list[str], log: Path, env: dict[str, str], cwd: Path) -> None:
        self.command = command
        self.log = log
        self.env = env
        self.cwd = cwd  # relative paths in Storm's defaults land here
        self.proc: subprocess.Popen[bytes] | None = None
        # Only KillingLocalCluster reads its stdin: the line that asks for the kill.
        self.killing = KILLING_LOCAL_CLUSTER in command

    def start(self) -> None:
        with self.log.open("wb") as out:
            try:
                self.proc = subprocess.Popen(
                    self.command,
                    stdin=subprocess.PIPE if self.killing else subprocess.DEVNULL, stdout=out,
                    stderr=subprocess.STDOUT, env=self.env, cwd=self.cwd,
                    start_new_session=True,
                    preexec_fn=die_with_parent())
            except OSError as exc:
                msg = f"cannot start Storm's JVM ({self.command[0]}): {exc}"
                raise StormError(msg) from exc

    def exit_code(self) -> int | None:
        return None if self.proc is None else self.proc.poll()

    def kill_topology(self, timeout: float) -> str:
        """Ask KillingLocalCluster to kill the topology and wait up to `timeout` seconds for
        the JVM to end after it; "" if it did, else what went wrong (stop() still has to
        be called)."""
        if self.proc is None or self.proc.stdin is None:
            return "Storm's JVM was not started by a killing command"
        try:
            self.proc.stdin.write(b"kill\n")
            self.proc.stdin.close()
        except OSError as exc:
            return f"asking Storm's JVM to kill the topology failed: {exc}"
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return (f"expected Storm's JVM to kill the topology and exit within {timeout:g}s "
                    "of being asked, it was still running")
        if code != 0 or KILLED not in self.log.read_text(errors="replace"):
            return (f"expected Storm's JVM to log {KILLED!r} and exit with code 0 after "
                    f"killing the topology, it exited with code {code}")
        return ""

    def stop(self) -> int | None:
        """Stop the JVM and every process of its group; the JVM's exit code if it had
        ended on its own before."""
        if self.proc is None:
            return None
        code = self.proc.poll()
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            self.proc.stdin.close()
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
