"""The Kafka word count (examples/storm_topologies/kafka_wordcount) under fire: three
containers on 127.0.0.1-3, one broker or three, SIGKILLs at random moments of a spout task, a
bolt task, a stream manager or a whole container, and a broker restart, while the input
topic is filled a chunk before each kill. Judged by the count topic as a read_committed
consumer sees it."""

from __future__ import annotations

import os
import random
import signal
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from kafkakit import (
    create_topics,
    end_offsets,
    group_offsets,
    lines,
    produce_to,
    read_topic,
    unique,
    word_counts,
)
from testkit import Running

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "faults"))
from checkpointkit import Coordinator  # noqa: E402
from faultkit import HOSTS, find_process  # noqa: E402

from heronbridge.compat.streamparse import load_project, topology_name  # noqa: E402
from heronbridge.jvm.maven import tail  # noqa: E402
from heronbridge.runtime import config as rt  # noqa: E402
from heronbridge.runtime.plan import TaskLayout  # noqa: E402
from heronbridge.runtime.plan.packing import round_robin  # noqa: E402
from heronbridge.runtime.statemgr import STATEFUL_CHECKPOINTS  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "storm_topologies" / "kafka_wordcount"
CONTAINERS = 3
PARTITIONS = 4
VICTIMS = ("spout task", "bolt task", "stream manager", "container")
RECOVERY_TIMEOUT = 120.0
SIZES = {"ci": 10_000, "full": 1_000_000}  # lines, by $HERONBRIDGE_FAULTS_SIZE
KILLS = {"ci": 3, "full": 10}


@dataclass
class Event:
    what: str
    detail: str
    recovered_s: float | None = None


@dataclass
class KafkaExactRun:
    home: object
    state: object
    tmp: Path
    cluster: object  # heronbridge.jvm.kafka.KafkaCluster
    lines: int
    seed: int
    events: list[Event] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.bootstrap = self.cluster.bootstrap_servers
        self.source, self.sink = unique("lines"), unique("counts")
        create_topics(self.bootstrap, {self.source: PARTITIONS, self.sink: 1},
                      replication=len(self.cluster.nodes))
        self.text = lines(self.lines, seed=self.seed)
        self.expected = word_counts(self.text)
        self.total = sum(self.expected.values())
        name = topology_name(EXAMPLE, None)
        options = {
            "kafka.bootstrap.servers": self.bootstrap, "kafka.spout.topics": self.source,
            "kafka.bolt.topic": self.sink, rt.RELIABILITY_MODE: rt.EFFECTIVELY_ONCE,
            rt.CHECKPOINT_INTERVAL_SECS: 1, rt.CHECKPOINT_ROOT: str(self.tmp / "checkpoints"),
            rt.RESTART_BACKOFF_SECS: 0.1, rt.METRICS_INTERVAL_SECS: 0.5,
            "topology.workers": CONTAINERS}
        project = load_project(EXAMPLE, name, None, options, False,
                               self.home.workdir(name) / "resources")
        self.plan = project.plan
        self.running = Running(self.plan, self.home, self.state, project)
        self.running.hosts = HOSTS
        self.layout = TaskLayout.of(self.plan)
        self.packing = round_robin(self.plan, CONTAINERS)
        self.rng = random.Random(self.seed)
        self.coordinator = Coordinator(self.state, self.plan.name)
        self.fed = 0

    # -- feeding, waiting -----------------------------------------------------------------

    def feed(self, count: int) -> None:
        """The next `count` lines into the input topic."""
        chunk = self.text[self.fed:self.fed + count]
        # Keep line i on partition i % PARTITIONS across chunks.
        for p in range(PARTITIONS):
            part = chunk[(p - self.fed) % PARTITIONS::PARTITIONS]
            if part:
                produce_to(self.bootstrap, self.source, part, p)
        self.fed += len(chunk)

    def wait(self, condition, timeout: float, what: str, interval: float = 0.2):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.running.check()  # dead executors restart, as under `heronbridge run`
            found = condition()
            if found:
                return found
            time.sleep(interval)
        msg = (f"timed out after {timeout}s waiting for {what}; events so far:\n"
               f"{self.summary()}\n{self.diagnosis()}")
        raise AssertionError(msg)

    def diagnosis(self) -> str:
        """What a stall leaves to read: the checkpoint totals, each broker's state and
        log tail, and the tail of every task's and process's log (one task's repeated
        lines would fill a tail of them all)."""
        parts = [f"checkpoint totals: {dict(self.coordinator.poll() or self.coordinator.totals())}"]
        for n in self.cluster.nodes:
            state = "running" if n.running else f"exited ({n.process and n.process.poll()})"
            parts.append(f"--- broker {n.node_id} {n.address}: {state}\n{tail(n.log, 15)}")
        for p in sorted(self.running.workdir.glob("container-*/logs/*.log")):
            parts.append(f"--- {p.parent.parent.name}/{p.name}\n{tail(p, 12)}")
        return "\n".join(parts)[-60000:]

    def consistent(self) -> str | None:
        node = self.state.get(STATEFUL_CHECKPOINTS, self.plan.name)
        return node.checkpoint_ids[0] if node is not None and node.checkpoint_ids else None

    def _processing_again(self, before: Counter, started: float, event: Event,
                          rolled_back: bool):
        seen: dict[str, float] = {}

        def check() -> bool:
            now = self.coordinator.poll()
            if now is None:
                return False
            if "base" not in seen and (not rolled_back or (
                    now["rollbacks"] > before["rollbacks"] and not self.coordinator.restoring)):
                seen["base"] = now["checkpoints-completed"]
            if "base" in seen and not self.coordinator.restoring \
                    and now["checkpoints-completed"] > seen["base"]:
                event.recovered_s = time.monotonic() - started
                return True
            return False

        return check

    # -- the faults -------------------------------------------------------------------------

    def kill_at_random(self) -> Event:
        victim = self.rng.choice(VICTIMS)
        name = self.plan.name
        if victim in ("spout task", "bolt task"):
            components = ["lines"] if victim == "spout task" else ["split", "count", "sink"]
            component = self.rng.choice(components)
            task = self.rng.choice(self.layout.component_tasks[component])
            container = self.packing.container_of(task)
            pid = find_process(name, "task", container, task)
            event = Event(victim, f"task {task} ({component}), container {container}")
            kill = lambda: os.kill(pid, signal.SIGKILL)  # noqa: E731
        else:
            container = self.rng.randrange(CONTAINERS)
            if victim == "stream manager":
                pid = find_process(name, "stream manager", container)
                kill = lambda: os.kill(pid, signal.SIGKILL)  # noqa: E731
            else:  # the executor's group: the container (with the master in container 0)
                pid = find_process(name, "executor", container)
                kill = lambda: os.killpg(pid, signal.SIGKILL)  # noqa: E731
            event = Event(victim, f"container {container}")
        before = self.coordinator.poll() or self.coordinator.totals()
        started = time.monotonic()
        kill()
        self.wait(self._processing_again(before, started, event, rolled_back=True),
                  RECOVERY_TIMEOUT, f"processing again after killing the {victim} of "
                  f"{event.detail}")
        self.events.append(event)
        return event

    def restart_broker(self) -> Event:
        node = self.rng.choice(self.cluster.nodes).node_id
        event = Event("broker restart", f"node {node} SIGKILLed, started again")
        before = self.coordinator.poll() or self.coordinator.totals()
        started = time.monotonic()
        self.cluster.kill(node)
        time.sleep(2.0)
        self.cluster.start_node(node)
        self.wait(self._processing_again(before, started, event, rolled_back=False),
                  RECOVERY_TIMEOUT, f"a checkpoint after restarting broker {node}")
        self.events.append(event)
        return event

    def run(self, kills: int, pause: tuple[float, float] = (0.3, 1.5)) -> list:
        """The input fed in kills + 1 chunks, each followed by a kill (and, halfway, a
        broker restart); then every count read back as a read_committed consumer."""
        chunk = -(-self.lines // (kills + 1))
        self.feed(chunk)
        self.wait(lambda: self.consistent() is not None, 120, "a consistent checkpoint")
        for n in range(kills):
            time.sleep(self.rng.uniform(*pause))
            if n == kills // 2:
                self.restart_broker()
            self.kill_at_random()
            self.feed(chunk)
        # Every line's offset committed: the spout commits a checkpoint's offsets once the
        # checkpoint is complete, when the sink writes that checkpoint's transaction.
        self.wait(self._read_to_end, 600 + self.lines / 500, "every line's offset "
                  "committed through a checkpoint", interval=2.0)
        done = self.coordinator.poll() or self.coordinator.totals()
        self.wait(lambda: (self.coordinator.poll() or Counter())["checkpoints-completed"]
                  >= done["checkpoints-completed"] + 2, 120, "two checkpoints more")
        return read_topic(self.bootstrap, self.sink, 1, timeout=120 + self.total / 20_000)

    def _read_to_end(self) -> bool:
        group = f"{self.plan.name}-lines"
        return group_offsets(self.bootstrap, group, self.source, PARTITIONS) == \
            end_offsets(self.bootstrap, self.source, PARTITIONS)

    def summary(self) -> str:
        rows = [f"seed {self.seed}, {self.lines} lines, {len(self.events)} events"]
        for n, e in enumerate(self.events, 1):
            took = "-" if e.recovered_s is None else f"{e.recovered_s:5.1f} s"
            rows.append(f"  {n:2}. {e.what:15} {e.detail:34} checkpoint again after {took}")
        return "\n".join(rows)
