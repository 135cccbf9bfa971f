"""The fault suite's harness: the durable word count over a generated log, a process of
one kind SIGKILLed mid-run, the recovery timed, and every line checked.

Recovery is timed twice from the kill: `back`, until the killed process (for an
executor: its whole container) is running again and registered where it registers;
`flowing`, until the spout has heard more acks than it had trees in flight at the kill
(so trees emitted after the kill are completing)."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from testkit import Running

from heronbridge.compat.streamparse import load_project, topology_name
from heronbridge.runtime import control
from heronbridge.runtime.errors import RuntimeKernelError
from heronbridge.runtime.plan import TaskLayout
from heronbridge.runtime.plan.packing import round_robin
from heronbridge.runtime.procfs import descendants
from heronbridge.runtime.statemgr import PHYSICAL_PLANS, TMASTERS

DURABLE = Path(__file__).resolve().parents[2] / "examples" / "storm_topologies" / "durable"
WORD = re.compile(r"[a-z]+")
WORDS = "ember maple brook cedar river lumen stone grove north harbor".split()
HOSTS = {0: "127.0.0.1", 1: "127.0.0.2", 2: "127.0.0.3"}
MAX_PENDING = 200  # config.json's topology.max.spout.pending
MESSAGE_TIMEOUT = 3  # seconds: trees lost with a killed process replay this soon
KINDS = ("spout task", "bolt task", "stream manager", "metrics manager", "topology master",
         "executor")


@dataclass
class Outcome:
    kind: str
    containers: int
    victim: str
    lines: int
    back: float | None = None
    flowing: float | None = None
    notes: list[str] = field(default_factory=list)

    def record(self) -> dict:
        return {"kind": self.kind, "containers": self.containers, "victim": self.victim,
                "lines": self.lines, "back_s": self.back, "flowing_s": self.flowing}


class Acks:
    """The spout's ack events, read as its output file grows."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.events = 0
        self.ids: set[int] = set()

    def poll(self) -> int:
        try:
            with self.path.open("rb") as f:
                f.seek(self.offset)
                data = f.read()
        except FileNotFoundError:
            return self.events
        end = data.rfind(b"\n") + 1
        self.offset += end
        for line in data[:end].splitlines():
            record = json.loads(line)
            if record.get("event") == "ack":
                self.events += 1
                self.ids.add(record["id"])
        return self.events


def write_log(path: Path, lines: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    text = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 8))) for _ in range(lines)]
    path.write_text("\n".join(text) + "\n")
    return text


class DurableRun:
    """The durable example running over `lines` generated lines in `containers`
    containers (each on its own loopback address when there are several)."""

    def __init__(self, home, state, tmp: Path, containers: int, lines: int) -> None:
        self.tmp, self.state, self.containers = tmp, state, containers
        self.text = write_log(tmp / "log.txt", lines)
        self.out, self.offsets = tmp / "out", tmp / "offsets"
        options = {"example.output.dir": str(self.out), "durable.offsets": str(self.offsets),
                   "durable.log": str(tmp / "log.txt"), "topology.workers": containers,
                   "topology.message.timeout.secs": MESSAGE_TIMEOUT}
        name = topology_name(DURABLE, None)
        project = load_project(DURABLE, name, None, options, False,
                               home.workdir(name) / "resources")
        self.plan = project.plan
        self.running = Running(self.plan, home, state, project)
        if containers > 1:
            self.running.hosts = HOSTS
        layout = TaskLayout.of(self.plan)
        self.packing = round_robin(self.plan, containers)
        self.spout = layout.component_tasks["log"][0]
        self.acks = Acks(self.out / f"log-{self.spout}.jsonl")

    # -- where things are -------------------------------------------------------------

    def container_of(self, task: int) -> int:
        return self.packing.container_of(task)

    def bolt(self) -> int:
        """A split task, in another container than the spout's when there are several."""
        tasks = TaskLayout.of(self.plan).component_tasks["split"]
        return next((t for t in tasks if self.container_of(t) != self.container_of(self.spout)),
                    tasks[0])

    def task_log(self, task: int) -> Path:
        component = TaskLayout.of(self.plan).task_component[task]
        return (self.running.workdir / f"container-{self.container_of(task)}" / "logs"
                / f"task-{task}-{component}.log")

    def process(self, kind: str, container: int, task: int | None = None) -> int:
        return find_process(self.plan.name, kind, container, task)

    def started_pids(self, task: int) -> list[int]:
        try:
            text = self.task_log(task).read_text(errors="replace")
        except FileNotFoundError:
            return []
        return [int(p) for p in re.findall(r"started \(incarnation \d+, pid (\d+)\)", text)]

    def stmgr_pid(self, container: int) -> int | None:
        pplan = self.state.get(PHYSICAL_PLANS, self.plan.name)
        return next((s.pid for s in pplan.stmgrs if s.container == container), None) \
            if pplan is not None else None

    # -- the checks ---------------------------------------------------------------------

    def expected(self) -> set[tuple[int, int]]:
        return {(n, i) for n, line in enumerate(self.text)
                for i, _ in enumerate(WORD.findall(line))}

    def counted(self) -> set[tuple[int, int]]:
        found = set()
        for path in self.out.glob("count-*.jsonl"):
            for line in path.read_text().splitlines():
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    continue  # the line a killed task was writing
                found.add((record["offset"], record["position"]))
        return found

    def committed(self) -> int:
        try:
            return int((self.offsets / "log-0.offset").read_text() or 0)
        except (FileNotFoundError, ValueError):
            return 0

    def complete(self) -> bool:
        self.acks.poll()
        return (len(self.acks.ids) == len(self.text) and self.committed() == len(self.text)
                and self.counted() >= self.expected())

    def missing(self) -> str:
        lines = sorted(set(range(len(self.text))) - self.acks.ids)
        words = sorted(self.expected() - self.counted())
        return (f"never acked: {len(lines)} lines {lines[:20]}; never counted: {len(words)} "
                f"words {words[:20]}; committed offset {self.committed()} of {len(self.text)}")


def find_process(topology: str, kind: str, container: int, task: int | None = None) -> int:
    """The pid of a topology's live process of a kind (procfs's names)."""
    for proc in descendants():
        cmd = proc.cmd
        if proc.kind != kind or topology not in " ".join(cmd) and task is None:
            continue
        if task is not None:
            if "--task" in cmd and cmd[cmd.index("--task") + 1] == str(task):
                return proc.pid
        elif "--container" in cmd and cmd[cmd.index("--container") + 1] == str(container):
            return proc.pid
        elif kind == "topology master" and container == 0:
            return proc.pid
    msg = f"no {kind} of container {container} (task {task}) is running"
    raise AssertionError(msg)


def wait(run: DurableRun, condition: Callable[[], object], timeout: float, what: str,
         interval: float = 0.02) -> object:
    """Poll `condition`, restarting dead executors as `heronbridge run` does."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run.running.check()
        found = condition()
        if found:
            return found
        time.sleep(interval)
    msg = f"timed out after {timeout}s waiting for {what}; {run.missing()}\n{run.running.logs()}"
    raise AssertionError(msg)


def kill_and_recover(run: DurableRun, kind: str) -> Outcome:
    """SIGKILL one process of `kind` once a quarter of the lines are acked; time its
    recovery; wait until every line is acked and every word counted."""
    outcome = kill_timed(run, kind, len(run.text) // 4)
    wait(run, run.complete, 120, "every line acked and every word counted", interval=0.2)
    return outcome


def kill_in_turn(run: DurableRun, kinds: tuple[str, ...]) -> list[Outcome]:
    """SIGKILL one process of each kind in turn, the kills spread evenly over the lines'
    acks, each once the last has recovered; time each recovery; wait until every line is
    acked and every word counted."""
    lines = len(run.text)
    outcomes = [kill_timed(run, kind, lines * (n + 1) // (len(kinds) + 1))
                for n, kind in enumerate(kinds)]
    wait(run, run.complete, 120, "every line acked and every word counted", interval=0.2)
    return outcomes


def kill_timed(run: DurableRun, kind: str, acks: int) -> Outcome:
    """SIGKILL one process of `kind` once the spout has heard `acks` acks, and time its
    recovery."""
    lines = len(run.text)
    spout_container = run.container_of(run.spout)
    container = spout_container if kind in ("stream manager", "metrics manager",
                                            "executor") else 0
    wait(run, lambda: run.acks.poll() >= acks, 120, f"{acks} lines acked")
    if kind in ("spout task", "bolt task"):
        task = run.spout if kind == "spout task" else run.bolt()
        container = run.container_of(task)
        pid = run.process("task", container, task)
        victim = f"task {task} ({'log' if task == run.spout else 'split'}), container {container}"
        back = _task_back(run, task, pid)
    else:
        pid = run.process(kind, container)
        victim = f"container {container}"
        back = {"stream manager": _stmgr_back, "metrics manager": _metrics_back,
                "topology master": _master_back, "executor": _container_back}[kind](
                    run, container, pid)
    outcome = Outcome(kind, run.containers, victim, lines)
    # Flowing again: acks beyond what was in flight at the kill, or, where fewer lines
    # than that were left (an earlier kill's recovery let the acks near the end), all.
    in_flight_at_kill = min(run.acks.poll() + MAX_PENDING, lines - 1)
    killed_at = time.monotonic()
    os.kill(pid, signal.SIGKILL)

    def recovered() -> bool:
        now = time.monotonic() - killed_at
        if outcome.back is None and back():
            outcome.back = now
        if outcome.flowing is None and run.acks.poll() > in_flight_at_kill:
            outcome.flowing = now
        return outcome.back is not None and outcome.flowing is not None

    wait(run, recovered, 90, f"the {kind} to recover")
    return outcome


# -- "back and registered", per kind -----------------------------------------------


def _task_back(run: DurableRun, task: int, pid: int) -> Callable[[], bool]:
    """A new process of the task registered (it logs `started` once it has)."""
    before = set(run.started_pids(task))  # this one's, and those killed before it
    return lambda: bool(set(run.started_pids(task)) - before)


def _stmgr_back(run: DurableRun, container: int, pid: int) -> Callable[[], bool]:
    """The master's physical plan holds the new stream manager."""
    return lambda: run.stmgr_pid(container) not in (None, pid)


def _metrics_back(run: DurableRun, container: int, pid: int) -> Callable[[], bool]:
    """A new metrics manager wrote its container's samples."""
    sink = run.running.workdir / f"container-{container}" / "metrics.jsonl"
    seen: dict[str, int] = {}

    def back() -> bool:
        if "size" not in seen:
            try:
                new = run.process("metrics manager", container)
            except AssertionError:
                return False
            if new == pid:
                return False
            seen["size"] = sink.stat().st_size
        return sink.stat().st_size > seen["size"]
    return back


def _master_back(run: DurableRun, container: int, pid: int) -> Callable[[], bool]:
    """A new master published its location and every stream manager registered again."""
    old = run.state.get(TMASTERS, run.plan.name)

    def back() -> bool:
        location = run.state.get(TMASTERS, run.plan.name)
        if location is None or location.server_port == old.server_port:
            return False
        try:
            return control.metrics(run.state, run.plan.name, timeout=1.0).all_ready
        except RuntimeKernelError:
            return False
    return back


def _container_back(run: DurableRun, container: int, pid: int) -> Callable[[], bool]:
    """Every process of the container is new: its stream manager in the physical plan,
    each of its tasks registered."""
    stmgr = run.stmgr_pid(container)
    tasks = {i.task_id: set(run.started_pids(i.task_id))
             for i in run.packing.containers[container].instances}
    return lambda: (run.stmgr_pid(container) not in (None, stmgr)
                    and all(set(run.started_pids(t)) - old for t, old in tasks.items()))
