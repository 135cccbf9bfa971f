"""TopologyContext: what a task knows about itself and the topology around it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import where
from ..plan.logical import Grouping, Input, LogicalPlan, Stream
from ..plan.tasks import TaskLayout
from .metrics import Metrics


@dataclass(frozen=True)
class TopologyContext:
    topology_name: str
    topology_id: str
    task_id: int
    component_id: str
    component_index: int
    task_to_component: dict[int, str]
    component_to_tasks: dict[str, tuple[int, ...]]
    streams: dict[str, dict[str, Stream]]  # component -> stream name -> Stream
    sources: tuple[Input, ...]  # what this component subscribes to
    targets: dict[str, list[tuple[str, str]]]  # own stream -> [(bolt, grouping as text)]
    target_groupings: dict[str, list[tuple[str, Grouping]]]  # own stream -> [(bolt, grouping)]
    config: dict[str, Any] = field(default_factory=dict)
    metrics: Metrics = field(default_factory=Metrics)  # the component's own (api.metrics)

    @classmethod
    def build(cls, plan: LogicalPlan, topology_id: str, task_id: int) -> TopologyContext:
        layout = TaskLayout.of(plan)
        component = layout.task_component[task_id]
        spec = plan.components[component]
        return cls(
            topology_name=plan.name,
            topology_id=topology_id,
            task_id=task_id,
            component_id=component,
            component_index=layout.index_of(task_id),
            task_to_component=dict(layout.task_component),
            component_to_tasks=dict(layout.component_tasks),
            streams={name: dict(c.outputs) for name, c in plan.components.items()},
            sources=tuple(spec.inputs),
            targets={s: [(b, str(g)) for b, g in plan.subscribers(component, s)]
                     for s in spec.outputs},
            target_groupings={s: plan.subscribers(component, s) for s in spec.outputs},
            config=plan.component_config(component),
            metrics=Metrics(where(plan.name, component, task_id)),
        )

    def component_tasks(self, component: str) -> tuple[int, ...]:
        return self.component_to_tasks.get(component, ())

    def output_fields(self, component: str, stream: str = "default") -> tuple[str, ...]:
        return self.streams[component][stream].fields
