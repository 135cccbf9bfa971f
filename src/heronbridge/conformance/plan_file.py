"""plan.json: the topology as the analysis needs it, written next to the traces.

    {"topology": name,
     "reliable": true when Storm would ack (ackers not 0),
     "mode": the runtime's topology.reliability.mode, when the topology sets one,
     "components": {id: {"kind": "spout" | "bolt", "parallelism": n,
                         "streams": {stream: {"fields": [...], "direct": bool}},
                         "inputs": [{"source": id, "stream": s,
                                     "grouping": "shuffle" | "fields" | "all" | "global" |
                                                 "none" | "direct" | "local_or_shuffle" |
                                                 "partial_key" | "custom",
                                     "fields": [...]}]}}}
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from heronbridge.runtime.config import ATMOST_ONCE, RELIABILITY_MODE
from heronbridge.runtime.plan.logical import LogicalPlan

PLAN_FILE = "plan.json"


def describe(plan: LogicalPlan) -> dict[str, Any]:
    return {
        "topology": plan.name,
        "reliable": plan.config.get(RELIABILITY_MODE) != ATMOST_ONCE,
        "mode": plan.config.get(RELIABILITY_MODE),
        "components": {
            name: {
                "kind": spec.kind,
                "parallelism": spec.parallelism,
                "streams": {s.name: {"fields": list(s.fields), "direct": s.direct}
                            for s in spec.outputs.values()},
                "inputs": [{"source": i.component, "stream": i.stream,
                            "grouping": i.grouping.kind, "fields": list(i.grouping.fields)}
                           for i in spec.inputs],
            }
            for name, spec in sorted(plan.components.items())
        },
    }


def write(plan: LogicalPlan, run_dir: Path) -> Path:
    path = Path(run_dir) / PLAN_FILE
    path.write_text(json.dumps(describe(plan), indent=1))
    return path


def read(run_dir: Path) -> dict[str, Any]:
    return json.loads((Path(run_dir) / PLAN_FILE).read_text())
