"""Reading back the JSON-lines metrics sinks of a topology's containers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def latest_samples(workdir: Path) -> dict[tuple[str, int, int], dict[str, Any]]:
    """The last record of every (component, task, container) in a topology's sinks.

    Counters in a record are cumulative over all of a task's incarnations, so the last
    record holds its totals.
    """
    latest: dict[tuple[str, int, int], dict[str, Any]] = {}
    for sink in sorted(workdir.glob("container-*/metrics.jsonl")):
        with sink.open(encoding="utf-8") as f:
            for line in f:
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line cut short by a crash
                latest[(record["component"], record["task"], record["container"])] = record
    return latest
