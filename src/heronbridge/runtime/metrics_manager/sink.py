"""Reading back the JSON-lines metrics sinks of a topology's containers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..logfiles import rotated


def latest_samples(workdir: Path) -> dict[tuple[str, int, int], dict[str, Any]]:
    """The last record of every (component, task, container) in a topology's sinks (and
    their rotated parts, oldest first).

    Counters in a record are cumulative over all of a task's incarnations, so the last
    record holds its totals.
    """
    latest: dict[tuple[str, int, int], dict[str, Any]] = {}
    for sink in sorted(workdir.glob("container-*/metrics.jsonl")):
        for part in rotated(sink):
            _read(part, latest)
    return latest


def _read(sink: Path, latest: dict[tuple[str, int, int], dict[str, Any]]) -> None:
    with sink.open(encoding="utf-8") as f:
        for line in f:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut short by a crash
            latest[(record["component"], record["task"], record["container"])] = record
