"""Event sampling (Storm UI's "Debug"): N% of a component's emitted tuples written, as
they leave the task, to a file beside its log that the page reads live.

Storm sends the sampled tuples to an event logger bolt that writes a worker's
events.log; here each task writes its own, `container-N/logs/events-ID-COMPONENT.jsonl`
(owner only, rotated past `heronbridge.log.max.bytes`, one backup), one JSON object a
line: `{"ts": epoch ms, "component", "task", "stream", "tasks": [the tasks it went to],
"root": its tuple tree (0 untracked), "values": [...]}`. Tuples are sampled at the
task's flush, not at each emit, so that a task not sampling pays nothing per tuple; a
tuple that goes to no task (nobody subscribes) is not sampled.
"""

from __future__ import annotations

import json
import os
import random
import time
from pathlib import Path
from typing import Any

from .logfiles import LOG_DIR_ENV, RotatingOutput, events_name

MAX_VALUE_CHARS = 500  # a value's text in the file is cut here: the file is for reading


def events_path(folder: str | Path, task: int, component: str) -> Path:
    return Path(folder) / events_name(task, component)


def _shown(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float)):
        return value
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= MAX_VALUE_CHARS else text[:MAX_VALUE_CHARS] + "..."


class Sampler:
    """One task's sampling: `take` picks `percent` of the emits in the collector's
    buffers before they are encoded; `flush` writes them out (at each metrics publish)."""

    def __init__(self, component: str, task: int, percent: float, streams: dict[int, str],
                 max_bytes: int, folder: str | None = None, seed: int | None = None) -> None:
        self.component = component
        self.task = task
        self.percent = percent
        self.streams = streams  # stream number -> its name
        self.random = random.Random(seed).random
        self.path = events_path(folder or os.environ.get(LOG_DIR_ENV) or ".", task, component)
        self.max_bytes = max_bytes
        self.lines: list[bytes] = []
        self.sampled = 0
        self._out: RotatingOutput | None = None

    def take(self, buffers: list) -> None:
        """Sample the records waiting in `buffers` (a tuple sent to several tasks is one
        emit: its copies share their values list)."""
        share = self.percent / 100.0
        chosen: dict[int, dict] = {}  # id(values) -> its event
        skipped: set[int] = set()
        now = int(time.time() * 1000)
        rand = self.random
        for b in buffers:
            for record in b.records:
                values = record[0]
                key = id(values)
                event = chosen.get(key)
                if event is None:
                    if key in skipped:
                        continue
                    if rand() >= share:
                        skipped.add(key)
                        continue
                    event = chosen[key] = {
                        "ts": now, "component": self.component, "task": self.task,
                        "stream": self.streams.get(b.stream, str(b.stream)), "tasks": [],
                        "root": record[1] if len(record) > 1 else 0,
                        "values": [_shown(v) for v in values]}
                event["tasks"].append(b.task)
        for event in chosen.values():
            self.lines.append(json.dumps(event, default=repr).encode() + b"\n")
        self.sampled += len(chosen)
        if len(self.lines) >= 10_000:  # a high share of a fast stream: write as it goes
            self.flush()

    def flush(self) -> None:
        if not self.lines:
            return
        if self._out is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._out = RotatingOutput(self.path, self.max_bytes, backup_count=1)
        data, self.lines = b"".join(self.lines), []
        self._out.write(data)

    def close(self) -> None:
        self.flush()
        if self._out is not None:
            self._out.close()
            self._out = None
