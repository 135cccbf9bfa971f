"""Task ids by Storm's rule, so traces from Storm and from the runtime line up.

Storm sorts component ids as Java strings (UTF-16 code units) and numbers each
component's tasks consecutively from 1, system components such as `__acker` included.
"""

from __future__ import annotations

from dataclasses import dataclass

from .logical import LogicalPlan


def java_order(name: str) -> bytes:
    """A sort key equal to Java's String.compareTo (UTF-16 code units, unsigned)."""
    return name.encode("utf-16-be", "surrogatepass")


@dataclass(frozen=True)
class TaskLayout:
    """Which task ids each component owns; reserved system components included."""

    task_component: dict[int, str]
    component_tasks: dict[str, tuple[int, ...]]

    @classmethod
    def of(cls, plan: LogicalPlan) -> TaskLayout:
        sizes = {name: spec.parallelism for name, spec in plan.components.items()}
        sizes.update(plan.reserved)
        task_component: dict[int, str] = {}
        component_tasks: dict[str, tuple[int, ...]] = {}
        next_id = 1
        for name in sorted(sizes, key=java_order):
            ids = tuple(range(next_id, next_id + sizes[name]))
            next_id += sizes[name]
            component_tasks[name] = ids
            for task in ids:
                task_component[task] = name
        return cls(task_component, component_tasks)

    def index_of(self, task: int) -> int:
        """The task's index within its component (Storm's getThisTaskIndex)."""
        return self.component_tasks[self.task_component[task]].index(task)

    def runnable(self, plan: LogicalPlan) -> list[int]:
        """Task ids that run a process (reserved components do not)."""
        return sorted(t for t, c in self.task_component.items() if c in plan.components)
