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
from pathlib import Path

JARS = Path("/usr/share/java")
MAIN = "org.apache.zookeeper.server.ZooKeeperServerMain"


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
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, sig)
            self.process.wait(30)
        self.process = None


@contextlib.contextmanager
def running_zookeeper(folder: Path):
    """A server started in `folder`, stopped when the block ends."""
    server = ZooKeeperServer(folder)
    server.start()
    try:
        yield server
    finally:
        server.stop()
