"""How far a run has got, read from its trace files while they are being written.

A runner polls `Progress(traces_dir).poll()` and stops when the snapshot is `done`:
something was traced, no reliable spout message is waiting for its ack or fail, and
nothing has happened for the scenario's quiet time. Tick tuples (and the acks of them)
are not activity: a bolt ticked every second would otherwise never be quiet.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import schema


@dataclass(frozen=True)
class Snapshot:
    records: int  # every record read so far
    quiet_for: float  # seconds since the newest activity (by its `t`), wall clock
    pending: int  # reliable spout messages whose latest event is an emit
    per_component: dict[str, dict[str, int]]  # {component: {ev: count}}
    exits: int  # exit records (injected faults ending a task's process)
    errors: int  # error records (components reporting errors)
    files: int  # trace files (task processes) seen
    bad_lines: int = 0  # complete lines that were not JSON objects
    pending_ids: list[tuple[str, int, str]] = field(default_factory=list)  # a few, to show
    first_emit: float | None = None  # wall clock of the earliest emit: the topology is up

    def done(self, quiet: float) -> bool:
        return self.records > 0 and self.pending == 0 and self.quiet_for >= quiet

    def summary(self) -> str:
        counts = "; ".join(f"{c}: " + ", ".join(f"{ev} {n}" for ev, n in sorted(evs.items()))
                           for c, evs in sorted(self.per_component.items()))
        text = (f"{self.records} records in {self.files} files, {self.pending} spout "
                f"messages pending, quiet for {self.quiet_for:.1f}s, {self.exits} exits, "
                f"{self.errors} errors")
        if self.pending_ids:
            text += f"; pending e.g. {self.pending_ids}"
        return text + (f" ({counts})" if counts else "")


class _File:
    __slots__ = ("offset", "ticks")

    def __init__(self) -> None:
        self.offset = 0  # after the last complete line read
        self.ticks: set[str] = set()  # tick tuple ids, whose acks are not activity


class Progress:
    def __init__(self, traces_dir: str | Path) -> None:
        self.dir = Path(traces_dir)
        self.files: dict[Path, _File] = {}
        self.records = 0
        self.bad_lines = 0
        self.last_activity: float | None = None
        self.created = time.time()
        self.per_component: dict[str, Counter[str]] = {}
        self.exits = 0
        self.errors = 0
        self.first_emit: float | None = None
        # (component, task, msg id) -> (t, latest event) of reliable spout messages
        self.spout_msgs: dict[tuple[str, int, str], tuple[float, str]] = {}

    def poll(self) -> Snapshot:
        if self.dir.is_dir():
            for path in sorted(self.dir.glob("*.jsonl")):
                self._read(path, self.files.setdefault(path, _File()))
        pending = [key for key, (_t, ev) in self.spout_msgs.items() if ev == schema.EMIT]
        since = self.last_activity if self.last_activity is not None else self.created
        return Snapshot(
            records=self.records,
            quiet_for=max(0.0, time.time() - since),
            pending=len(pending),
            per_component={c: dict(n) for c, n in sorted(self.per_component.items())},
            exits=self.exits,
            errors=self.errors,
            files=len(self.files),
            bad_lines=self.bad_lines,
            pending_ids=sorted(pending)[:5],
            first_emit=self.first_emit,
        )

    def _read(self, path: Path, state: _File) -> None:
        try:
            with path.open("rb") as f:
                f.seek(state.offset)
                data = f.read()
        except OSError:
            return
        end = data.rfind(b"\n")
        if end < 0:
            return  # nothing complete yet: a writer is half-way through its first line
        state.offset += end + 1
        for line in data[:end].split(b"\n"):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError:
                self.bad_lines += 1
                continue
            if isinstance(record, dict):
                self._take(record, state)
            else:
                self.bad_lines += 1

    def _take(self, record: dict[str, Any], state: _File) -> None:
        self.records += 1
        ev, component = record.get("ev"), str(record.get("component"))
        self.per_component.setdefault(component, Counter())[str(ev)] += 1
        t = record.get("t")
        t = float(t) if isinstance(t, (int, float)) else time.time()
        activity = True
        if ev == schema.RECV and record.get("src") == schema.SYSTEM_COMPONENT:
            state.ticks.add(str(record.get("id")))
            activity = False
        elif ev == schema.ACK and str(record.get("id")) in state.ticks:
            state.ticks.discard(str(record.get("id")))
            activity = False
        elif ev == schema.EXIT:
            self.exits += 1
        elif ev == schema.ERROR:
            self.errors += 1
        if activity and (self.last_activity is None or t > self.last_activity):
            self.last_activity = t
        if ev == schema.EMIT and (self.first_emit is None or t < self.first_emit):
            self.first_emit = t
        if ev == schema.EMIT and record.get("msg_id") is None:
            return
        if ev in (schema.EMIT, schema.SPOUT_ACK, schema.SPOUT_FAIL):
            key = (component, int(record.get("task") or 0), str(record.get("msg_id")))
            seen = self.spout_msgs.get(key)
            if seen is None or t >= seen[0]:
                self.spout_msgs[key] = (t, ev)
