"""Synthetic conformance runs: the trace records a small topology would leave on each
system, written as the tracing hook lays them out, for the analysis tests to change.

The topology: `words` (spout) emits one word per msg id;
  counter  fields(word) from words, emits [word, running count]
  tally    fields(word) from counter
  total    global from counter
  every    all from words
  spread   shuffle from words
  router   shuffle from words, emits [i] on the direct stream `routed`
  sink     direct from router/routed
Storm numbers `__acker` first, so its task ids are the runtime's plus one.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from heronbridge.conformance.scenario import Divergence, Scenario
from heronbridge.conformance.trace import schema, tracefile

WORDS = ("the quick brown fox jumps over the lazy dog while the dog sleeps and the fox "
         "runs over a hill of the old town").split()

PARALLELISM = {"counter": 2, "every": 2, "router": 1, "sink": 2, "spread": 2, "tally": 2,
               "total": 2, "words": 1}


def plan(reliable: bool = True) -> dict[str, Any]:
    def bolt(inputs: list[dict], streams: dict | None = None) -> dict[str, Any]:
        return {"kind": "bolt", "parallelism": 0, "streams": streams or {}, "inputs": inputs}

    def sub(source: str, grouping: str, fields: tuple = (), stream: str = "default") -> dict:
        return {"source": source, "stream": stream, "grouping": grouping,
                "fields": list(fields)}

    word = {"default": {"fields": ["word"], "direct": False}}
    components = {
        "words": {"kind": "spout", "parallelism": 0, "streams": word, "inputs": []},
        "counter": bolt([sub("words", "fields", ("word",))],
                        {"default": {"fields": ["word", "count"], "direct": False}}),
        "tally": bolt([sub("counter", "fields", ("word",))]),
        "total": bolt([sub("counter", "global")]),
        "every": bolt([sub("words", "all")]),
        "spread": bolt([sub("words", "shuffle")]),
        "router": bolt([sub("words", "shuffle")],
                       {"routed": {"fields": ["n"], "direct": True}}),
        "sink": bolt([sub("router", "direct", stream="routed")]),
    }
    for name, spec in components.items():
        spec["parallelism"] = PARALLELISM[name]
    return {"topology": "synthetic", "reliable": reliable, "components": components}


@dataclass
class Run:
    """One system's records, in the order the hook would have written them."""

    system: str
    records: list[dict[str, Any]] = field(default_factory=list)
    tasks: dict[str, list[int]] = field(default_factory=dict)
    clock: float = 1_700_000_000.0
    step: float = 0.001
    ids: int = 0

    def add(self, component: str, task: int, ev: str, **fields: Any) -> dict[str, Any]:
        self.clock += self.step
        record = {"t": round(self.clock, 6), "ev": ev, "component": component, "task": task,
                  **fields}
        self.records.append(record)
        return record

    def find(self, **match: Any) -> list[dict[str, Any]]:
        return [r for r in self.records if all(r.get(k) == v for k, v in match.items())]

    def task(self, component: str, index: int) -> int:
        return self.tasks[component][index]


def simulate(system: str, words: tuple[str, ...] | list[str] = WORDS, *,
             replay_once: frozenset[int] = frozenset(),
             give_up: frozenset[int] = frozenset(), step: float = 0.001,
             shift_fields: int = 0) -> Run:
    """What the topology does with `words` on `system`. Msg ids in `replay_once` fail at
    the counter once and are replayed; those in `give_up` fail and are not replayed.
    `shift_fields` moves every word to another counter task index."""
    run = Run(system, step=step)
    first = 2 if system == schema.STORM else 1
    names = sorted(PARALLELISM)
    for name in names:
        run.tasks[name] = list(range(first, first + PARALLELISM[name]))
        first += PARALLELISM[name]
    handshake = {name: list(ids) for name, ids in run.tasks.items()}
    if system == schema.STORM:
        handshake["__acker"] = [1]
    for name in names:
        for task in run.tasks[name]:
            run.add(name, task, schema.START, pid=1000 + task, tasks=handshake)
    spout = run.task("words", 0)
    counts: dict[int, Counter] = {}

    def recv(component: str, task: int, src: str, src_task: int, values: list,
             stream: str = "default") -> str:
        run.ids += 1
        tup = f"{system}-{run.ids}"
        run.add(component, task, schema.RECV, id=tup, src=src, stream=stream,
                src_task=src_task, values=schema.canonical(values))
        return tup

    def emit(component: str, task: int, values: list, *, anchors: list, msg_id: Any = None,
             stream: str = "default", direct: int | None = None) -> None:
        run.add(component, task, schema.EMIT, stream=stream, values=schema.canonical(values),
                anchors=anchors, direct=direct,
                msg_id=None if msg_id is None else schema.canonical(msg_id), targets=None)

    def ack(component: str, task: int, tup: str) -> None:
        run.add(component, task, schema.ACK, id=tup, injected=False)

    for i, word in enumerate(words):
        attempts = 2 if i in replay_once else 1
        for attempt in range(attempts):
            emit("words", spout, [word], anchors=[], msg_id=i)
            counter = run.task("counter", (len(word) + shift_fields) % 2)
            tup = recv("counter", counter, "words", spout, [word])
            failing = (i in replay_once and attempt == 0) or i in give_up
            if failing:
                run.add("counter", counter, schema.FAIL, id=tup, injected=False)
            else:
                n = counts.setdefault(counter, Counter())
                n[word] += 1
                emit("counter", counter, [word, n[word]], anchors=[tup])
                for target in ("tally", "total"):
                    task = run.task(target, len(word) % 2 if target == "tally" else 0)
                    ack(target, task, recv(target, task, "counter", counter, [word, n[word]]))
                ack("counter", counter, tup)
            for task in run.tasks["every"]:
                ack("every", task, recv("every", task, "words", spout, [word]))
            shuffled = run.task("spread", (i + (system == schema.RUNTIME)) % 2)
            ack("spread", shuffled, recv("spread", shuffled, "words", spout, [word]))
            router = run.task("router", 0)
            tup = recv("router", router, "words", spout, [word])
            sink = run.task("sink", i % 2)
            emit("router", router, [i], anchors=[tup], stream="routed", direct=sink)
            ack("sink", sink, recv("sink", sink, "router", router, [i], stream="routed"))
            ack("router", router, tup)
            run.add("words", spout, schema.SPOUT_FAIL if failing else schema.SPOUT_ACK,
                    msg_id=schema.canonical(i))
    return run


def write(run_dir: Path, *runs: Run, reliable: bool = True,
          topology: dict[str, Any] | None = None) -> Path:
    """plan.json (`topology`, else this module's plan) and one trace file per task
    process (seq in write order); a record's `_pid` puts it in that process's file, as
    after a restart."""
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "plan.json").write_text(json.dumps(topology or plan(reliable)))
    for run in runs:
        folder = run_dir / run.system / schema.TRACES
        folder.mkdir(parents=True, exist_ok=True)
        files: dict[tuple[str, int, int], list[dict]] = {}
        for record in run.records:
            pid = record.get("_pid", 1000 + record["task"])
            files.setdefault((record["component"], record["task"], pid), []).append(
                {k: v for k, v in record.items() if not k.startswith("_")})
        for (component, task, pid), records in files.items():
            start = next((r for r in records if r["ev"] == schema.START), {})
            head = {"component": component, "task": task, "pid": pid,
                    "t": records[0]["t"], "tasks": start.get("tasks", {})}
            tracefile.write_records(folder / tracefile.file_name(component, task, pid),
                                    head, records, block_rows=7)
    return run_dir


def scenario(*, faults: list | None = None, checks: tuple[str, ...] | None = None,
             divergences: list[Divergence] | None = None, delivery: str = "auto") -> Scenario:
    return Scenario(name="synthetic", project=Path("synthetic"), faults=faults or [],
                    checks=checks, divergences=divergences or [], delivery=delivery)
