"""Issue 25's shape under fire: a pystorm ReliableSpout with its default max_fails, a relay
(par 3, shuffle, auto-anchor and auto-ack) and a sink (par 3, fields on the key) that
appends every id it sees to a file; 3,000 ids at 100/s, a 5 s message timeout.

What came out is judged from the files: every id whose ack reached the spout (its `ack`
called, by the runtime or by ReliableSpout giving up after max_fails) must be in a
sink's file; fails are counted per id, over every incarnation of the spout."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from faultkit import HOSTS, wait
from testkit import Running

from heronbridge.compat.streamparse import load_project, topology_name
from heronbridge.runtime import config as rt
from heronbridge.runtime.plan import TaskLayout
from heronbridge.runtime.plan.packing import round_robin

PROJECT = Path(__file__).with_name("relay_project")
HERONPY = Path(__file__).with_name("heronpy_relay.py")


@dataclass
class Verdict:
    """What came out of one run."""

    ids: int
    acked: set[int]
    seen: Counter  # id -> times a sink wrote it
    fails: Counter  # id -> fail calls, every spout incarnation
    starts: int  # spout incarnations

    @property
    def lost(self) -> list[int]:
        """Acked, never processed by the sink."""
        return sorted(self.acked - set(self.seen))

    @property
    def max_fails(self) -> int:
        return max(self.fails.values(), default=0)

    def p99_fails(self) -> int:
        per_id = sorted(self.fails.get(i, 0) for i in range(self.ids))
        return per_id[min(len(per_id) - 1, int(len(per_id) * 0.99))] if per_id else 0

    @property
    def replays(self) -> int:
        return sum(self.fails.values())

    @property
    def duplicates(self) -> int:
        return sum(n - 1 for n in self.seen.values() if n > 1)

    def summary(self) -> str:
        return (f"{len(self.acked)}/{self.ids} acked, {len(self.lost)} lost {self.lost[:10]}, "
                f"fails per id max {self.max_fails} p99 {self.p99_fails()}, "
                f"{self.replays} fails in all, {self.duplicates} duplicates, "
                f"{self.starts} spout start(s)")


class RelayRun:
    """The relay topology over `containers` containers (each on its own loopback address
    when there are several)."""

    def __init__(self, home, state, tmp: Path, containers: int, ids: int = 3000,
                 rate: float = 100, timeout_secs: int = 5, options: dict | None = None,
                 hosts: dict[int, str] | None = None, api: str = "streamparse",
                 spark: object = None) -> None:
        self.tmp, self.state, self.containers = tmp, state, containers
        self.ids, self.rate = ids, rate
        self.out = tmp / "out"
        self._read: dict[Path, tuple[int, list[dict]]] = {}
        opts = {"relay.out": str(self.out), "relay.count": ids, "relay.rate": rate,
                rt.CONTAINERS: containers, "topology.message.timeout.secs": timeout_secs,
                **(options or {})}
        if api == "heronpy":
            from heronbridge.compat.heronpy.loader import load_file

            self.plan, project = load_file(HERONPY, options=opts), None
        else:
            opts["topology.workers"] = opts.pop(rt.CONTAINERS)
            name = topology_name(PROJECT, None)
            project = load_project(PROJECT, name, None, opts, False,
                                   home.workdir(name) / "resources")
            self.plan = project.plan
        self.running = Running(self.plan, home, state, project, spark=spark)
        if containers > 1:
            self.running.hosts = hosts or HOSTS
        self.layout = TaskLayout.of(self.plan)
        self.packing = round_robin(self.plan, containers)
        self.spout = self.layout.component_tasks["ids"][0]

    # -- what the files say ---------------------------------------------------------

    def events(self) -> list[dict]:
        """Every spout event so far, in each file's order (read on from where the last
        call stopped: the files of a long run are read once)."""
        for path in sorted(self.out.glob("spout-*.jsonl")):
            offset, found = self._read.setdefault(path, (0, []))
            with path.open("rb") as f:
                f.seek(offset)
                data = f.read()
            end = data.rfind(b"\n") + 1
            for line in data[:end].splitlines():
                try:
                    found.append(json.loads(line))
                except json.JSONDecodeError:
                    continue  # the line a killed spout was writing
            self._read[path] = (offset + end, found)
        return [e for _, (_, found) in sorted(self._read.items()) for e in found]

    def seen(self) -> Counter:
        seen: Counter = Counter()
        for path in self.out.glob("sink-*.txt"):
            for line in path.read_text().splitlines():
                if line.isdigit():
                    seen[int(line)] += 1
        return seen

    def verdict(self) -> Verdict:
        events = self.events()
        return Verdict(self.ids, {e["id"] for e in events if e["event"] == "ack"}, self.seen(),
                       Counter(e["id"] for e in events if e["event"] == "fail"),
                       sum(e["event"] == "start" for e in events))

    def done(self) -> bool:
        """The spout's latest incarnation has had every id acked (or given up)."""
        acked: set[int] = set()
        for e in self.events():
            if e["event"] == "start":
                acked = set()
            elif e["event"] == "ack":
                acked.add(e["id"])
        return len(acked) == self.ids

    def acks(self) -> int:
        return sum(e["event"] == "ack" for e in self.events())

    def missing(self) -> str:
        return f"{self.verdict().summary()}\n{self.running.logs()[-30000:]}"

    def wait(self, condition, timeout: float, what: str, interval: float = 0.1):
        return wait(self, condition, timeout, what, interval)
