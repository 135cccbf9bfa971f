"""A real ZooKeeper server for the cluster tests: Debian's `zookeeper` package (installed by
`scripts/debian_packages.py zookeeper`, as the tox env `cluster` does), run standalone on
a loopback port in a folder of the test's own; it can be killed and started again on the
same port with the same data, as a crashed server would come back."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import psutil

JARS = Path("/usr/share/java")
MAIN = "org.apache.zookeeper.server.ZooKeeperServerMain"


# The detached schedulers: the local one and the Spark driver (not their executors).
SCHEDULER_MODULES = ("heronbridge.runtime.scheduler", "heronbridge.runtime.scheduler.spark")


def kill_schedulers(option: str, matches: Callable[[str], bool]) -> list[str]:
    """SIGKILL every detached scheduler whose `option` (`--state`, `--spark-master`) has a
    value that `matches`, with every process under it (its executors and their processes, a
    driver's JVM): what a test left behind would otherwise outlive the server or cluster
    it used (a scheduler cut off from them may wait up to its orphan bound). Returns what
    it killed, and warns with it."""
    killed = []
    for proc in psutil.process_iter(["cmdline"]):
        argv = proc.info["cmdline"] or []
        module = argv[argv.index("-m") + 1] if "-m" in argv[:-1] else ""
        value = argv[argv.index(option) + 1] if option in argv[:-1] else ""
        if module not in SCHEDULER_MODULES or not matches(value):
            continue
        with contextlib.suppress(psutil.Error):
            tree = [proc, *proc.children(recursive=True)]
            for each in tree:
                with contextlib.suppress(psutil.Error):
                    each.kill()
            psutil.wait_procs(tree, timeout=10)
            killed.append(f"pid {proc.pid} ({' '.join(argv[1:])}) and {len(tree) - 1} "
                          "processes under it")
    if killed:
        warnings.warn(f"killed schedulers left behind: {'; '.join(killed)}", stacklevel=2)
    return killed


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


class ZooKeeperServer:
    def __init__(self, folder: Path, tick_ms: int = 500) -> None:
        jar = JARS / "zookeeper.jar"
        java = shutil.which("java")
        if not jar.is_file() or java is None:
            msg = (f"the cluster tests need ZooKeeper and Java: expected {jar} and `java` "
                   "(run `python scripts/debian_packages.py zookeeper`)")
            raise RuntimeError(msg)
        self.folder = folder
        self.port = free_port()
        self.hosts = f"127.0.0.1:{self.port}"
        (folder / "data").mkdir(parents=True, exist_ok=True)
        # A short tick: sessions may be as short as 2 ticks, so a test can let one expire.
        (folder / "zoo.cfg").write_text(
            f"tickTime={tick_ms}\ndataDir={folder / 'data'}\nclientPort={self.port}\n"
            "clientPortAddress=127.0.0.1\nadmin.enableServer=false\n"
            "4lw.commands.whitelist=ruok\nmaxSessionTimeout=60000\n")
        self.command = [java, "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                        "-cp", f"{jar}", MAIN, str(folder / "zoo.cfg")]
        self.process: subprocess.Popen | None = None

    def uri(self, root: str) -> str:
        return f"zk://{self.hosts}/{root.strip('/')}"

    def start(self, timeout: float = 60.0) -> None:
        with (self.folder / "server.log").open("ab") as log:
            self.process = subprocess.Popen(self.command, stdout=log, stderr=log,
                                            stdin=subprocess.DEVNULL, cwd=self.folder,
                                            start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                msg = f"ZooKeeper exited with {self.process.returncode}: see {self.folder}"
                raise RuntimeError(msg)
            if self.ok():
                return
            time.sleep(0.1)
        self.stop()
        msg = f"ZooKeeper did not answer on {self.hosts} within {timeout}s"
        raise RuntimeError(msg)

    def ok(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                s.sendall(b"ruok")
                return s.recv(4) == b"imok"
        except OSError:
            return False

    def stop(self, sig: int = signal.SIGKILL) -> None:
        """Stop the server (a test may start it again)."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, sig)
            self.process.wait(30)
        self.process = None

    def close(self) -> None:
        """Stop the server for good, and every scheduler left behind on it."""
        kill_schedulers("--state", lambda state: state.startswith(f"zk://{self.hosts}/"))
        self.stop()


@contextlib.contextmanager
def running_zookeeper(folder: Path):
    """A server started in `folder`, closed when the block ends."""
    server = ZooKeeperServer(folder)
    server.start()
    try:
        yield server
    finally:
        server.close()
