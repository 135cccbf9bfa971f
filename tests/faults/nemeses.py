"""Nemeses: the faults the suite inflicts on a running topology, each started and healed.

- SIGKILL of a process of any kind (tasks, stream manager, metrics manager, master,
  executor, a whole container);
- SIGSTOP for longer than the heartbeat interval and the message timeout, then SIGCONT
  (a gray failure: alive, silent);
- a network partition between the containers on 127.0.0.2 and 127.0.0.3: each
  container runs in a cgroup of its host's from its start (a socket belongs to the
  cgroup of the process that made it), and iptables drops what one host's sockets send
  to the other's address (`-m cgroup`: nothing else on this machine is touched);
- ZooKeeper down (the server killed, then started again on its port and data), and one
  host cut off from it (iptables on that container's cgroup);
- the topology master paused (SIGSTOP);
- a forward clock jump: the topology's processes run under libfaketime, whose offset
  file the nemesis moves forward (wall and monotonic clocks);
- the checkpoint root filling up: it is a small tmpfs, filled with a ballast file.

A `Stage` holds what the nemeses act on; `Stage.close` heals whatever is still broken.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from faultkit import HOSTS, find_process

CGROUP_ROOT = Path("/sys/fs/cgroup/unified")
FAKETIME_LIB = Path("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1")
STOP_SECS = 6.0  # longer than the 2 s heartbeat interval and the 5 s message timeout
OUTAGE_SECS = 6.0  # partitions, ZooKeeper outages, a full disk


@contextlib.contextmanager
def unfaked():
    """Start what follows with the real clock (ZooKeeper), whatever this process's
    environment says for the topology's processes."""
    saved = os.environ.pop("LD_PRELOAD", None)
    try:
        yield
    finally:
        if saved is not None:
            os.environ["LD_PRELOAD"] = saved


def needs_root(what: str) -> str | None:
    """Why `what` cannot run here, or None."""
    if os.geteuid() != 0:
        return f"{what} needs root (iptables, cgroups, mounts)"
    if not shutil.which("iptables"):
        return f"{what} needs iptables (python scripts/debian_packages.py iptables)"
    if not CGROUP_ROOT.is_dir():
        return f"{what} needs the cgroup2 hierarchy at {CGROUP_ROOT}"
    return None


class HostGroups:
    """A cgroup per host address; `place` moves a process (and so its children to come)
    into its host's."""

    def __init__(self) -> None:
        HostGroups.made += 1
        self.root = f"heronbridge-faults-{os.getpid()}-{HostGroups.made}"
        self.paths: dict[str, Path] = {}

    made = 0

    def name(self, host: str) -> str:
        path = self.paths.get(host)
        if path is None:
            path = self.paths[host] = CGROUP_ROOT / self.root / host
            path.mkdir(parents=True, exist_ok=True)
        return f"{self.root}/{host}"

    def place(self, pid: int, host: str) -> None:
        self.name(host)
        with contextlib.suppress(OSError):  # gone meanwhile
            (self.paths[host] / "cgroup.procs").write_text(str(pid))

    def patch_local_scheduler(self, monkeypatch) -> None:
        """Start each container's executor in its host's cgroup (before it has started
        anything: its children and their sockets are born there)."""
        from heronbridge.runtime.scheduler.local import Supervisor

        spawn = Supervisor._spawn
        groups = self

        def spawn_in_cgroup(supervisor, container: int) -> None:
            spawn(supervisor, container)
            host = supervisor.hosts.get(container, HOSTS[0])
            groups.place(supervisor.executors[container].pid, host)

        monkeypatch.setattr(Supervisor, "_spawn", spawn_in_cgroup)

    def close(self) -> None:
        for path in self.paths.values():  # processes left go back to the root
            with contextlib.suppress(OSError):
                for pid in (path / "cgroup.procs").read_text().split():
                    with contextlib.suppress(OSError):
                        (CGROUP_ROOT / "cgroup.procs").write_text(pid)
                path.rmdir()
        with contextlib.suppress(OSError):
            (CGROUP_ROOT / self.root).rmdir()


@dataclass
class Stage:
    """A running topology and the handles the nemeses use on it."""

    topology: str
    containers: int
    tmp: Path
    zookeeper: object = None  # tests/cluster/zkserver.ZooKeeperServer, when on ZooKeeper
    clock_file: Path | None = None  # libfaketime's offset file, when under it
    hosts: HostGroups | None = None  # the containers' cgroups, when partitions are wanted
    checkpoint_root: Path | None = None  # a tmpfs this stage mounted
    layout: object = None  # the plan's TaskLayout
    packing: object = None  # its PackingPlan
    rules: list[list[str]] = field(default_factory=list)
    stopped: list[int] = field(default_factory=list)

    # -- set up --------------------------------------------------------------------

    @staticmethod
    def faketime_env(tmp: Path) -> dict[str, str]:
        """Environment that puts a topology's processes under libfaketime (offset 0 until
        a clock jump moves it)."""
        offset = tmp / "faketime"
        offset.write_text("+0\n")
        return {"LD_PRELOAD": str(FAKETIME_LIB), "FAKETIME_TIMESTAMP_FILE": str(offset),
                "FAKETIME_CACHE_DURATION": "1"}

    def mount_checkpoint_root(self, path: Path, size: str = "4m") -> Path:
        path.mkdir(parents=True, exist_ok=True)
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs",
                        str(path)], check=True)
        self.checkpoint_root = path
        return path

    # -- processes -----------------------------------------------------------------

    def pid(self, kind: str, container: int, task: int | None = None) -> int:
        return find_process(self.topology, kind, container, task)

    def task_in(self, component: str, container: int) -> tuple[int, int]:
        """(task, container): a task of `component` in `container` if it has one."""
        tasks = self.layout.component_tasks[component]
        task = next((t for t in tasks if self.packing.container_of(t) == container), tasks[0])
        return task, self.packing.container_of(task)

    def victim(self, kind: str, container: int, component: str | None) -> tuple[int, int]:
        """(pid, container) of the process of `kind` (of `component`'s task) to strike."""
        if kind == "topology master":
            return self.pid(kind, 0), 0
        container = min(container, self.containers - 1)
        if component is not None:
            task, container = self.task_in(component, container)
            return self.pid("task", container, task), container
        return self.pid(kind, container), container

    def host_cgroup(self, container: int) -> str:
        """The cgroup of a container's host, as iptables names it (relative to the
        cgroup2 root)."""
        if self.hosts is None:
            msg = "this nemesis needs the containers in host cgroups (HostGroups)"
            raise AssertionError(msg)
        return self.hosts.name(HOSTS[container])

    def drop(self, *match: str) -> None:
        rule = ["OUTPUT", *match, "-j", "DROP"]
        with unfaked():
            subprocess.run(["iptables", "-w", "-I", *rule], check=True)
        self.rules.append(rule)

    def heal_network(self) -> None:
        for rule in self.rules:
            with unfaked():
                subprocess.run(["iptables", "-w", "-D", *rule], check=False,
                               capture_output=True)
        self.rules.clear()

    def cont(self) -> None:
        for pid in self.stopped:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
        self.stopped.clear()

    def close(self) -> None:
        """Heal everything still broken, and remove what the stage set up."""
        self.cont()
        self.heal_network()
        if self.zookeeper is not None and self.zookeeper.process is None:
            with unfaked():
                self.zookeeper.start()
        if self.checkpoint_root is not None:
            with contextlib.suppress(FileNotFoundError):
                (self.checkpoint_root / "ballast").unlink()

    def unmount(self) -> None:
        if self.checkpoint_root is not None:
            subprocess.run(["umount", "-l", str(self.checkpoint_root)], check=False)
            self.checkpoint_root = None


class Nemesis:
    """One fault: `start` breaks something, `heal` (after `secs`) mends it."""

    name = "nemesis"
    secs = 0.0
    needs: str | None = None  # "zookeeper", "clock", "checkpoints", "hosts"

    def start(self, stage: Stage) -> str:
        """Break it; returns what was done."""
        raise NotImplementedError

    def heal(self, stage: Stage) -> None:
        """Mend it (a kill mends itself: the runtime restarts what died)."""


class Kill(Nemesis):
    """SIGKILL a process of `kind` ("task" of `component`, "stream manager", ...,
    "container": the executor's whole session) in `container` (1 by default, as in
    issue 25; 0 when there is one)."""

    def __init__(self, kind: str, component: str | None = None, container: int = 1) -> None:
        self.kind, self.component, self.container = kind, component, container
        self.name = f"SIGKILL {component + ' task' if component else kind}"

    def start(self, stage: Stage) -> str:
        kind = "executor" if self.kind == "container" else self.kind
        pid, container = stage.victim(kind, self.container, self.component)
        if self.kind == "container":
            os.killpg(pid, signal.SIGKILL)
        else:
            os.kill(pid, signal.SIGKILL)
        return f"{self.name} (pid {pid}, container {container})"


class Pause(Nemesis):
    """SIGSTOP, then SIGCONT after `secs`."""

    def __init__(self, kind: str, component: str | None = None, container: int = 1,
                 secs: float = STOP_SECS) -> None:
        self.kind, self.component, self.container, self.secs = kind, component, container, secs
        what = "the topology master paused" if kind == "topology master" else \
            f"SIGSTOP {component + ' task' if component else kind}"
        self.name = f"{what} {secs:g} s"

    def start(self, stage: Stage) -> str:
        pid, container = stage.victim(self.kind, self.container, self.component)
        os.kill(pid, signal.SIGSTOP)
        stage.stopped.append(pid)
        return f"{self.name} (pid {pid}, container {container})"

    def heal(self, stage: Stage) -> None:
        stage.cont()


class Partition(Nemesis):
    """The containers on 127.0.0.2 and 127.0.0.3 cannot reach each other."""

    needs = "hosts"

    def __init__(self, secs: float = OUTAGE_SECS) -> None:
        self.secs = secs
        self.name = f"partition {HOSTS[1]} | {HOSTS[2]} {secs:g} s"

    def start(self, stage: Stage) -> str:
        a, b = stage.host_cgroup(1), stage.host_cgroup(2)
        stage.drop("-m", "cgroup", "--path", a, "-d", HOSTS[2])
        stage.drop("-m", "cgroup", "--path", b, "-d", HOSTS[1])
        return self.name

    def heal(self, stage: Stage) -> None:
        stage.heal_network()


class ZooKeeperDown(Nemesis):
    needs = "zookeeper"

    def __init__(self, secs: float = OUTAGE_SECS) -> None:
        self.secs = secs
        self.name = f"ZooKeeper down {secs:g} s"

    def start(self, stage: Stage) -> str:
        stage.zookeeper.stop()
        return self.name

    def heal(self, stage: Stage) -> None:
        with unfaked():
            stage.zookeeper.start()


class ZooKeeperCutOff(Nemesis):
    """One host's processes cannot reach ZooKeeper."""

    needs = "zookeeper"

    def __init__(self, container: int = 1, secs: float = OUTAGE_SECS) -> None:
        self.container, self.secs = container, secs
        self.name = f"{HOSTS[container]} cut off from ZooKeeper {secs:g} s"

    def start(self, stage: Stage) -> str:
        group = stage.host_cgroup(min(self.container, stage.containers - 1))
        stage.drop("-m", "cgroup", "--path", group, "-p", "tcp", "-d", "127.0.0.1",
                   "--dport", str(stage.zookeeper.port))
        return self.name

    def heal(self, stage: Stage) -> None:
        stage.heal_network()


class ClockJump(Nemesis):
    """Every process of the topology sees its clocks (wall and monotonic) jump forward."""

    needs = "clock"

    def __init__(self, secs: float = 60.0) -> None:
        self.jump = secs
        self.name = f"clock jumps +{secs:g} s"

    def start(self, stage: Stage) -> str:
        text = stage.clock_file.read_text().strip()
        offset = float(text.lstrip("+").rstrip("s") or 0) + self.jump
        stage.clock_file.write_text(f"+{offset:g}\n")
        return self.name


class DiskFull(Nemesis):
    """The checkpoint root (a small tmpfs) fills up."""

    needs = "checkpoints"

    def __init__(self, secs: float = OUTAGE_SECS) -> None:
        self.secs = secs
        self.name = f"checkpoint root full {secs:g} s"

    def start(self, stage: Stage) -> str:
        ballast = stage.checkpoint_root / "ballast"
        with ballast.open("wb") as f:  # until ENOSPC
            with contextlib.suppress(OSError):
                while True:
                    f.write(b"\0" * (64 << 10))
                    f.flush()
        return self.name

    def heal(self, stage: Stage) -> None:
        with contextlib.suppress(FileNotFoundError):
            (stage.checkpoint_root / "ballast").unlink()


def inflict(stage: Stage, nemesis: Nemesis, check=lambda: None) -> tuple[str, float]:
    """Start a nemesis, wait its time (calling `check`, which restarts dead containers),
    heal it; returns (what was done, when it was healed, time.monotonic())."""
    done = nemesis.start(stage)
    until = time.monotonic() + nemesis.secs
    while time.monotonic() < until:
        check()
        time.sleep(0.1)
    nemesis.heal(stage)
    return done, time.monotonic()
