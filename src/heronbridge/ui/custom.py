"""The components' own metrics (runtime.api.metrics: `user/NAME`), as the master last
reported them: for the page, Storm UI's component page and Prometheus."""

from __future__ import annotations

from typing import Any

from heronbridge.runtime.api.metrics import PREFIX

from .tracker import Topology


def custom_metrics(t: Topology, component: str | None = None) -> list[dict[str, Any]]:
    """[{component, task, name, kind: counter | gauge, value}], by component, task, name."""
    out = []
    for task in t.report.tasks if t.report is not None else []:
        if component is not None and task.component != component:
            continue
        for kind, values in (("counter", task.counters), ("gauge", task.gauges)):
            for key, value in values.items():
                if key.startswith(PREFIX):
                    out.append({"component": task.component, "task": task.task_id,
                                "name": key[len(PREFIX):], "kind": kind, "value": value})
    return sorted(out, key=lambda m: (m["component"], m["task"], m["name"]))
