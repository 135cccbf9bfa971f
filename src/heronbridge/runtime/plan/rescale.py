"""A running topology's new parallelism: the new logical plan, and which tasks must stop
or start for it (what `heronbridge update` changes, and nothing more).

Task ids follow Storm's rule for the new plan, so a component's ids shift when a
component sorted before it changes size. A task keeps running only if nothing it knows
changed: its own id, index, container and component size, and the ids and containers of
every component it receives from or sends to (its decoders and its routes are built
from those once, at start)."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, replace

from ..errors import PlanError, where
from .logical import FIELDS, LogicalPlan
from .packing import PackingPlan

# Topologies whose components keep state that a new parallelism repartitions by key
# (runtime/checkpoint/partitions.py): a bolt can change size when every input is
# fields-grouped; a spout's state is its place in its source, which has no key.
STATEFUL_MODES = ("EFFECTIVELY_ONCE", "effectively_once")
STATEFUL_FLAG = "topology.stateful"


class UpdateError(PlanError):
    """An update the running topology cannot take."""


def rescaled(plan: LogicalPlan, parallelism: Mapping[str, int]) -> LogicalPlan:
    """`plan` with new parallelism for some components; refuses by name an unknown
    component, a parallelism below 1, and, in a stateful topology, a spout or a bolt
    with an input that is not fields-grouped."""
    if not parallelism:
        msg = f"{where(plan.name)}: expected at least one COMPONENT:N, received none"
        raise UpdateError(msg)
    stateful = bool(plan.config.get(STATEFUL_FLAG)) or \
        plan.config.get("topology.reliability.mode") in STATEFUL_MODES
    components = dict(plan.components)
    for name, n in parallelism.items():
        if name not in components:
            msg = (f"{where(plan.name, name)}: no such component; expected one of "
                   f"{sorted(components)}")
            raise UpdateError(msg)
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            msg = f"{where(plan.name, name)}: parallelism must be an integer >= 1, received {n!r}"
            raise UpdateError(msg)
        if stateful and components[name].is_spout and n != components[name].parallelism:
            msg = (f"{where(plan.name, name)}: a spout of a stateful topology keeps its "
                   f"parallelism ({components[name].parallelism}); its state (its place in "
                   f"its source) cannot be split or merged into {n} tasks")
            raise UpdateError(msg)
        unkeyed = [f"{inp.component} ({inp.grouping})" for inp in components[name].inputs
                   if inp.grouping.kind != FIELDS]
        if stateful and unkeyed and n != components[name].parallelism:
            msg = (f"{where(plan.name, name)}: in a stateful topology a bolt's state is "
                   f"repartitioned by key, so every input must be fields-grouped to change "
                   f"its parallelism; it reads {', '.join(unkeyed)}")
            raise UpdateError(msg)
        components[name] = replace(components[name], parallelism=n)
    new = copy.copy(plan)
    new.components = components
    return new.validate()


@dataclass(frozen=True)
class Changes:
    """Task ids to stop (old plan) and to start (new plan), per container; containers
    the new packing adds or removes."""

    stop: dict[int, frozenset[int]]
    start: dict[int, frozenset[int]]
    added: frozenset[int]
    removed: frozenset[int]

    @property
    def stopped_tasks(self) -> list[int]:
        return sorted(t for ts in self.stop.values() for t in ts)

    @property
    def started_tasks(self) -> list[int]:
        return sorted(t for ts in self.start.values() for t in ts)


def _where(packing: PackingPlan) -> dict[tuple[str, int], tuple[int, int]]:
    """(component, index) -> (task id, container)."""
    return {(i.component, i.component_index): (i.task_id, c.id)
            for c in packing.containers for i in c.instances}


def _neighbours(plan: LogicalPlan, component: str) -> set[str]:
    spec = plan.components[component]
    near = {component} | {i.component for i in spec.inputs}
    near |= {n for n, s in plan.components.items() if any(i.component == component
                                                          for i in s.inputs)}
    return near


def changes(old_plan: LogicalPlan, old: PackingPlan, new_plan: LogicalPlan,
            new: PackingPlan) -> Changes:
    before, after = _where(old), _where(new)

    def shape(where_: dict, component: str) -> tuple:
        return tuple(sorted(v for k, v in where_.items() if k[0] == component))

    kept = set()
    for inst, place in after.items():
        component = inst[0]
        if before.get(inst) != place or component not in old_plan.components:
            continue
        if all(n in old_plan.components and shape(before, n) == shape(after, n)
               for n in _neighbours(new_plan, component) | _neighbours(old_plan, component)
               if n in new_plan.components):
            kept.add(inst)
    stop: dict[int, set[int]] = {c.id: set() for c in old.containers}
    start: dict[int, set[int]] = {c.id: set() for c in new.containers}
    for inst, (task, container) in before.items():
        if inst not in kept:
            stop[container].add(task)
    for inst, (task, container) in after.items():
        if inst not in kept:
            start[container].add(task)
    old_ids, new_ids = {c.id for c in old.containers}, {c.id for c in new.containers}
    return Changes({c: frozenset(t) for c, t in stop.items()},
                   {c: frozenset(t) for c, t in start.items()},
                   frozenset(new_ids - old_ids), frozenset(old_ids - new_ids))
