"""The effectively-once fault harness: an exactly counted word count in three containers
under EFFECTIVELY_ONCE, SIGKILLs at random moments, each followed by the wait for the
topology to process again, and the final counts read from the newest consistent
checkpoint.

Three word counts, one per API: the runtime's own (tests/runtime/stateful_components.py),
heronpy's StatefulComponent (examples/heronpy/stateful_wordcount.py) and a streamparse
project whose spout and counter use StatefulMixin (examples/storm_topologies/
stateful_wordcount). Each keeps its spout's offset and its counts in checkpointed state.

"Processing again" after a kill is read from the checkpoint coordinator's counters
(component `__checkpoints__` in the master's metrics): the rollbacks counter grew, the
coordinator is not restoring, and a checkpoint completed since, which needs every task
of the topology to have stored its state. A new master (its container was killed)
starts its counters at zero: the kit adds up the counters of every master it saw.
"""

from __future__ import annotations

import os
import pickle
import random
import re
import signal
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from faultkit import HOSTS, find_process, wait
from testkit import Running

from heronbridge.runtime import config as rt
from heronbridge.runtime import control
from heronbridge.runtime.checkpoint.coordinator import COMPONENT
from heronbridge.runtime.checkpoint.storage import CheckpointStorage
from heronbridge.runtime.errors import RuntimeKernelError
from heronbridge.runtime.plan import TaskLayout
from heronbridge.runtime.plan.packing import round_robin
from heronbridge.runtime.statemgr import STATEFUL_CHECKPOINTS, TMASTERS

ROOT = Path(__file__).resolve().parents[2]
HERONPY_EXAMPLE = ROOT / "examples" / "heronpy" / "stateful_wordcount.py"
STREAMPARSE_EXAMPLE = ROOT / "examples" / "storm_topologies" / "stateful_wordcount"
CONTAINERS = 3
VICTIMS = ("counting task", "stream manager", "container")
RECOVERY_TIMEOUT = 90  # seconds from a kill to a checkpoint completed after its rollback


def common_config(tmp: Path) -> dict:
    return {rt.RELIABILITY_MODE: rt.EFFECTIVELY_ONCE, rt.CHECKPOINT_INTERVAL_SECS: 1,
            rt.CHECKPOINT_ROOT: str(tmp / "checkpoints"), rt.RESTART_BACKOFF_SECS: 0.1,
            rt.METRICS_INTERVAL_SECS: 0.5}


@dataclass
class WordCount:
    """One of the three word counts: its plan, what its input counts to, and how its
    spout's offset and its counts sit in the checkpointed state."""

    api: str
    plan: object
    project: object
    expected: Counter
    end: int  # the spout's offset once it has read everything
    spout: str
    counter: str  # its counting tasks keep {word: count} as their state


def runtime_api(tmp: Path, lines: int) -> WordCount:
    sys.path.insert(0, str(ROOT / "tests" / "runtime"))
    from stateful_components import CountBolt, LineSpout, SplitBolt, expected_counts

    from heronbridge.runtime import Grouping, TopologyBuilder

    b = TopologyBuilder("exact-runtime-api", {
        **common_config(tmp), rt.CONTAINERS: CONTAINERS, rt.TICK_TUPLE_FREQ_SECS: 0.5,
        "test.out": str(tmp), "test.lines": lines, "test.interval": 0.001})
    b.spout("lines", LineSpout)
    b.bolt("split", SplitBolt, inputs=["lines"], par=2)
    b.bolt("count", CountBolt, inputs={"split": Grouping.by_fields("word")}, par=3)
    return WordCount("runtime API", b.build(), None, Counter(expected_counts(lines)), lines,
                     "lines", "count")


def heronpy(tmp: Path, lines: int) -> WordCount:
    from heronbridge.compat.heronpy.loader import heron_options, load_file
    from heronbridge.compat.streamparse import project_imports

    with heron_options(str(tmp)), project_imports(HERONPY_EXAMPLE.parent):
        from stateful_wordcount import expected_counts
        expected = Counter(expected_counts(lines))
    (tmp / "out").mkdir()
    plan = load_file(HERONPY_EXAMPLE, options={
        **common_config(tmp), rt.CONTAINERS: CONTAINERS, "wordcount.out": str(tmp / "out"),
        "wordcount.lines": lines, "wordcount.rate": 1000})
    return WordCount("heronpy", plan, None, expected, lines, "lines", "count")


def migrated(tmp: Path, rounds: int, home) -> WordCount:
    """The streamparse word count after `heronbridge migrate`: heronpy's API."""
    import shutil

    from heronbridge.migrate.runner import migrate

    copy = tmp / "migrated"
    shutil.copytree(STREAMPARSE_EXAMPLE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    outcome = migrate(copy, jobs=1)
    assert outcome.changed and not outcome.failed, outcome.failed
    return streamparse(tmp, rounds, home, copy, "migrated")


def streamparse(tmp: Path, rounds: int, home, folder: Path = STREAMPARSE_EXAMPLE,
                api: str = "streamparse") -> WordCount:
    from heronbridge.compat.projects import load_project
    from heronbridge.compat.streamparse import topology_name

    text = (STREAMPARSE_EXAMPLE / "src" / "data" / "lines.txt").read_text().lower()
    expected = Counter({w: n * rounds for w, n in Counter(re.findall("[a-z]+", text)).items()})
    name = topology_name(folder, None)
    project = load_project(folder, name, None, {
        **common_config(tmp), "topology.workers": CONTAINERS, rt.CONTAINERS: CONTAINERS,
        "example.output.dir": str(tmp / "out"), "stateful_wordcount.rounds": rounds,
        "stateful_wordcount.lines_per_sec": 1000}, False, home.workdir(name) / "resources")
    return WordCount(api, project.plan, project, expected, 200 * rounds, "lines", "count")


class Coordinator:
    """The checkpoint coordinator's counters, summed over every master seen."""

    def __init__(self, state, topology: str) -> None:
        self.state, self.topology = state, topology
        self.master: bytes | None = None
        self.base: Counter = Counter()
        self.last: Counter = Counter()
        self.restoring = True

    def poll(self) -> Counter | None:
        """The counters now, or None while no master answers."""
        before = self._master()
        try:
            report = control.metrics(self.state, self.topology, timeout=1.0)
        except RuntimeKernelError:
            return None
        task = next((t for t in report.tasks if t.component == COMPONENT), None)
        if task is None or self._master() != before:
            return None
        if before != self.master:
            self.base, self.last, self.master = self.base + self.last, Counter(), before
        self.last = Counter(task.counters)
        self.restoring = bool(task.gauges.get("restoring"))
        return self.totals()

    def totals(self) -> Counter:
        """As of the last answer."""
        return self.base + self.last

    def _master(self) -> bytes | None:
        location = self.state.get(TMASTERS, self.topology)
        return location.SerializeToString() if location is not None else None


@dataclass
class Kill:
    victim: str
    detail: str
    restored_s: float | None = None  # from the kill to the rollback done, tasks processing
    checkpointed_s: float | None = None  # ... to a checkpoint completed after it
    rollback_s: float = 0.0  # the coordinator's own last-rollback-secs


@dataclass
class ExactRun:
    """A word count running in three containers, killed at random."""

    count: WordCount
    home: object
    state: object
    seed: int
    kills: list[Kill] = field(default_factory=list)

    def __post_init__(self) -> None:
        plan = self.count.plan
        self.running = Running(plan, self.home, self.state, self.count.project)
        self.running.hosts = HOSTS
        self.layout = TaskLayout.of(plan)
        self.packing = round_robin(plan, CONTAINERS)
        self.rng = random.Random(self.seed)
        self.coordinator = Coordinator(self.state, plan.name)
        self.root = Path(plan.config[rt.CHECKPOINT_ROOT]) / plan.name

    # -- what the checkpoints hold ------------------------------------------------------

    def consistent(self) -> str | None:
        node = self.state.get(STATEFUL_CHECKPOINTS, self.count.plan.name)
        return node.checkpoint_ids[0] if node is not None and node.checkpoint_ids else None

    def saved(self, checkpoint: str, component: str) -> dict[int, dict]:
        """{task: its state} in a checkpoint, for every task of a component (read as the
        runtime reads it: checked against the topology's checkpoint key)."""
        name = self.count.plan.name
        storage = CheckpointStorage(str(self.root.parent), name,
                                    self.state.get_checkpoint_key(name))
        found = {}
        for t in self.layout.component_tasks[component]:
            blob = storage.load(checkpoint, component, t)
            if blob is None:
                raise FileNotFoundError(self.root / checkpoint / component / str(t))
            found[t] = pickle.loads(blob)  # noqa: S301 - checked against the key above
        return found

    def offset(self) -> tuple[str | None, int]:
        """The newest consistent checkpoint and the spout's offset in it."""
        checkpoint = self.consistent()
        if checkpoint is None:
            return None, 0
        try:
            return checkpoint, sum(s.get("offset", 0)
                                   for s in self.saved(checkpoint, self.count.spout).values())
        except FileNotFoundError:  # deleted as a newer one became consistent
            return None, 0

    def all_read(self) -> str | None:
        """The newest consistent checkpoint if it holds every line's counts."""
        checkpoint, offset = self.offset()
        return checkpoint if offset >= self.count.end else None

    def counted(self, checkpoint: str) -> Counter:
        total: Counter = Counter()
        for saved in self.saved(checkpoint, self.count.counter).values():
            total.update(saved)
        return total

    def missing(self) -> str:
        checkpoint, offset = self.offset()
        return (f"newest consistent checkpoint {checkpoint}, spout offset {offset} of "
                f"{self.count.end}; coordinator {dict(self.coordinator.totals())}"
                f"\n{self.running.logs()[-20000:]}")

    # -- the kills ----------------------------------------------------------------------

    def kill_at_random(self) -> Kill:
        victim = self.rng.choice(VICTIMS)
        container = self.rng.randrange(CONTAINERS)
        name = self.count.plan.name
        if victim == "counting task":
            task = self.rng.choice(self.layout.component_tasks[self.count.counter])
            container = self.packing.container_of(task)
            pid = find_process(name, "task", container, task)
            kill = Kill(victim, f"task {task} ({self.count.counter}), container {container}")
            signal_it = lambda: os.kill(pid, signal.SIGKILL)  # noqa: E731
        elif victim == "stream manager":
            pid = find_process(name, "stream manager", container)
            kill = Kill(victim, f"container {container}")
            signal_it = lambda: os.kill(pid, signal.SIGKILL)  # noqa: E731
        else:
            # The executor runs in its own session: its group is the whole container
            # (and, in container 0, the topology master).
            pid = find_process(name, "executor", container)
            kill = Kill(victim, f"container {container}" + " (with the master)" * (container == 0))
            signal_it = lambda: os.killpg(pid, signal.SIGKILL)  # noqa: E731
        before = self.coordinator.poll() or self.coordinator.totals()
        killed_at = time.monotonic()
        signal_it()
        seen: dict[str, float] = {}

        def processing() -> bool:
            now = self.coordinator.poll()
            if now is None:
                return False
            if "rolled" not in seen and now["rollbacks"] > before["rollbacks"] \
                    and not self.coordinator.restoring:
                kill.restored_s = time.monotonic() - killed_at
                kill.rollback_s = self.coordinator.last["last-rollback-secs"]
                seen["rolled"], seen["completed"] = 1, now["checkpoints-completed"]
            if "rolled" in seen and not self.coordinator.restoring \
                    and now["checkpoints-completed"] > seen["completed"]:
                kill.checkpointed_s = time.monotonic() - killed_at
                return True
            return False

        wait(self, processing, RECOVERY_TIMEOUT, f"the topology to process again after "
             f"killing the {victim} of {kill.detail}", interval=0.1)
        self.kills.append(kill)
        return kill

    def run(self, kills: int, pause: tuple[float, float] = (0.3, 1.5)) -> Counter:
        """Once the first checkpoint is consistent: `kills` kills, each at a random
        moment after the topology processes again; then every line read, and the counts
        of the checkpoint that holds them all."""
        wait(self, lambda: self.consistent() is not None, 60, "a consistent checkpoint")
        for _ in range(kills):
            time.sleep(self.rng.uniform(*pause))
            self.kill_at_random()
        return self.counted(self.until_all_read(stall=120))

    def until_all_read(self, stall: float) -> str:
        """The newest consistent checkpoint once it holds every line, waited for as long
        as the spout's offset in the newest consistent checkpoint moves on (a loaded
        machine reads slower): fails after `stall` seconds without it moving."""
        furthest, moved = -1, time.monotonic()
        while True:
            self.running.check()  # dead executors restart, as under `heronbridge run`
            checkpoint, offset = self.offset()
            if checkpoint is not None and offset >= self.count.end:
                return checkpoint
            if offset > furthest:
                furthest, moved = offset, time.monotonic()
            elif time.monotonic() - moved > stall:
                msg = (f"no checkpoint read further than line {furthest} for {stall}s, "
                       f"waiting for every line read; {self.missing()}")
                raise AssertionError(msg)
            time.sleep(0.2)

    def rollbacks(self) -> int:
        """Rollbacks the coordinators started, the first start's included."""
        totals = self.coordinator.poll() or self.coordinator.totals()
        return int(totals["rollbacks"])

    def summary(self) -> str:
        rows = [f"{self.count.api}: seed {self.seed}, {len(self.kills)} kills, "
                f"{self.rollbacks()} rollbacks (the first start's included)"]
        for n, k in enumerate(self.kills, 1):
            rows.append(f"  {n:2}. {k.victim:14} {k.detail:32} processing again after "
                        f"{k.restored_s:5.1f} s (last rollback {k.rollback_s:4.2f} s), "
                        f"checkpoint after {k.checkpointed_s:5.1f} s")
        return "\n".join(rows)
