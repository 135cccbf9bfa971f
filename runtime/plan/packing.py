"""Packing: which task runs in which container."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from ..errors import PlanError, where
from .logical import LogicalPlan
from .tasks import TaskLayout


@dataclass(frozen=True)
class InstancePlan:
    component: str
    task_id: int
    component_index: int


@dataclass(frozen=True)
class ContainerPlan:
    id: int
    instances: tuple[InstancePlan, ...]


@dataclass(frozen=True)
class PackingPlan:
    id: str
    containers: tuple[ContainerPlan, ...]

    def container_of(self, task_id: int, topology: str | None = None) -> int:
        for container in self.containers:
            if any(i.task_id == task_id for i in container.instances):
                return container.id
        msg = f"{where(topology, task=task_id)}: in no container of packing plan {self.id}"
        raise PlanError(msg)


def round_robin(plan: LogicalPlan, containers: int) -> PackingPlan:
    """Deal tasks, in task-id order, over `containers` containers (never more than tasks)."""
    layout = TaskLayout.of(plan)
    tasks = layout.runnable(plan)
    count = max(1, min(containers, len(tasks)))
    dealt: list[list[InstancePlan]] = [[] for _ in range(count)]
    for n, task in enumerate(tasks):
        component = layout.task_component[task]
        dealt[n % count].append(InstancePlan(component, task, layout.index_of(task)))
    shape = ";".join(",".join(f"{i.component}/{i.task_id}" for i in c) for c in dealt)
    plan_id = hashlib.sha1(f"{plan.name}|{shape}".encode()).hexdigest()[:12]
    return PackingPlan(plan_id, tuple(ContainerPlan(i, tuple(c)) for i, c in enumerate(dealt)))
