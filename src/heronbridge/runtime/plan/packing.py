"""Packing: which task runs in which container.

Two algorithms, as Heron has them (`heronbridge.packing`):
- `round-robin` (the default): tasks dealt in task-id order over `topology.stmgrs`
  containers;
- `ffd`: first fit decreasing under per-container limits, with per-component CPU, RAM
  and disk (Heron's `FirstFitDecreasingPacking`); it chooses the container count.

`repack` is what `heronbridge update` uses: it keeps every surviving instance (a
component's n-th task) where it was, drops the instances a component no longer has,
and places new ones by the algorithm's rule, so that only the affected containers
change. Task ids are always Storm's for the plan packed (see tasks.py).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError, PlanError, where
from .logical import LogicalPlan
from .tasks import TaskLayout, java_order

ALGORITHM = "heronbridge.packing"
ROUND_ROBIN, FFD = "round-robin", "ffd"
CPU_MAP = "topology.component.cpumap"  # {component: cores} or Heron's "a:1.5,b:2"
RAM_MAP = "topology.component.rammap"  # bytes
DISK_MAP = "topology.component.diskmap"  # bytes
MAX_CPU = "topology.container.max.cpu.hint"
MAX_RAM = "topology.container.max.ram.hint"
MAX_DISK = "topology.container.max.disk.hint"
PADDING = "topology.container.padding.percentage"
MAX_INSTANCES = "topology.container.max.instances"
SORTING = "topology.packing.ffd.sorting.strategy"  # RAM_FIRST or CPU_FIRST

GIB = 1 << 30
INSTANCE_DEFAULT = (1.0, GIB, GIB)  # cpu cores, ram bytes, disk bytes: Heron's defaults
LIMIT_DEFAULTS = {MAX_CPU: 4.0, MAX_RAM: 4 * GIB, MAX_DISK: 8 * GIB, PADDING: 10,
                  MAX_INSTANCES: 10}


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

    def placement(self) -> dict[tuple[str, int], int]:
        """(component, component index) -> container."""
        return {(i.component, i.component_index): c.id
                for c in self.containers for i in c.instances}


def _packed(plan: LogicalPlan, containers: dict[int, list[tuple[str, int]]]) -> PackingPlan:
    """A packing plan from {container: [(component, index)]}, with Storm's task ids for
    `plan`; its id hashes the shape, so equal packings have equal ids."""
    layout = TaskLayout.of(plan)
    built = []
    for cid in sorted(containers):
        instances = sorted((InstancePlan(c, layout.component_tasks[c][i], i)
                            for c, i in containers[cid]), key=lambda inst: inst.task_id)
        built.append(ContainerPlan(cid, tuple(instances)))
    shape = ";".join(f"{c.id}:" + ",".join(f"{i.component}/{i.task_id}" for i in c.instances)
                     for c in built)
    plan_id = hashlib.sha1(f"{plan.name}|{shape}".encode()).hexdigest()[:12]
    return PackingPlan(plan_id, tuple(built))


def _instances(plan: LogicalPlan) -> list[tuple[str, int]]:
    """Every runnable (component, index), in task-id order."""
    layout = TaskLayout.of(plan)
    return [(layout.task_component[t], layout.index_of(t)) for t in layout.runnable(plan)]


def round_robin(plan: LogicalPlan, containers: int) -> PackingPlan:
    """Deal tasks, in task-id order, over `containers` containers (never more than tasks)."""
    instances = _instances(plan)
    count = max(1, min(containers, len(instances)))
    dealt: dict[int, list[tuple[str, int]]] = {c: [] for c in range(count)}
    for n, inst in enumerate(instances):
        dealt[n % count].append(inst)
    return _packed(plan, dealt)


# -- first fit decreasing ----------------------------------------------------------------


def _number(plan: LogicalPlan, key: str, value: Any, component: str | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        try:
            value = float(value)
        except (TypeError, ValueError):
            value = -1
        if value <= 0:
            msg = f"{where(plan.name, component)}: config {key!r} expects a number > 0, " \
                  f"received {value!r}"
            raise ConfigError(msg)
    return float(value)


def component_map(plan: LogicalPlan, key: str) -> dict[str, float]:
    raw = plan.config.get(key) or {}
    if isinstance(raw, str):  # Heron's form: "spout:1,bolt:2"
        pairs = [p.rpartition(":")[::2] for p in raw.split(",") if p.strip()]
        raw = {name.strip(): value for name, value in pairs}
    if not isinstance(raw, dict):
        msg = f"{where(plan.name)}: config {key!r} expects {{component: value}} or " \
              f"'component:value,...', received {raw!r}"
        raise ConfigError(msg)
    unknown = set(raw) - set(plan.components)
    if unknown:
        msg = f"{where(plan.name)}: config {key!r} names no such component: {sorted(unknown)}"
        raise ConfigError(msg)
    return {name: _number(plan, key, value, name) for name, value in raw.items()}


@dataclass(frozen=True)
class Resources:
    cpu: float
    ram: float
    disk: float

    def __add__(self, other: Resources) -> Resources:
        return Resources(self.cpu + other.cpu, self.ram + other.ram, self.disk + other.disk)

    def fits(self, limit: Resources) -> bool:
        return self.cpu <= limit.cpu and self.ram <= limit.ram and self.disk <= limit.disk


NOTHING = Resources(0.0, 0.0, 0.0)


class FirstFit:
    """Per-instance resources and the usable size of a container (its hints less the
    padding) for `plan`."""

    def __init__(self, plan: LogicalPlan) -> None:
        self.plan = plan
        maps = [component_map(plan, k) for k in (CPU_MAP, RAM_MAP, DISK_MAP)]
        self.need = {name: Resources(*(m.get(name, d) for m, d in zip(maps, INSTANCE_DEFAULT,
                                                                        strict=True)))
                     for name in plan.components}
        limits = {k: _number(plan, k, plan.config.get(k, d)) for k, d in LIMIT_DEFAULTS.items()}
        usable = 1 - min(limits[PADDING], 90) / 100
        self.limit = Resources(limits[MAX_CPU] * usable, limits[MAX_RAM] * usable,
                               limits[MAX_DISK] * usable)
        self.max_instances = int(limits[MAX_INSTANCES])
        strategy = plan.config.get(SORTING, "RAM_FIRST")
        if strategy not in ("RAM_FIRST", "CPU_FIRST"):
            msg = f"{where(plan.name)}: config {SORTING!r} expects RAM_FIRST or CPU_FIRST, " \
                  f"received {strategy!r}"
            raise ConfigError(msg)
        self.cpu_first = strategy == "CPU_FIRST"
        for name, need in self.need.items():
            if not need.fits(self.limit):
                msg = (f"{where(plan.name, name)}: one instance needs {need} but a container "
                       f"offers {self.limit} after {limits[PADDING]:g}% padding; raise "
                       f"{MAX_CPU!r}/{MAX_RAM!r}/{MAX_DISK!r}")
                raise PlanError(msg)

    def decreasing(self, instances: Iterable[tuple[str, int]]) -> list[tuple[str, int]]:
        def key(inst: tuple[str, int]) -> tuple:
            n = self.need[inst[0]]
            big = (n.cpu, n.ram) if self.cpu_first else (n.ram, n.cpu)
            return (-big[0], -big[1], java_order(inst[0]), inst[1])
        return sorted(instances, key=key)

    def place(self, containers: dict[int, list[tuple[str, int]]],
              instances: Iterable[tuple[str, int]]) -> None:
        """Put each instance in the first container (by id) it fits in, else a new one."""
        used = {c: sum((self.need[n] for n, _ in insts), NOTHING)
                for c, insts in containers.items()}
        for inst in self.decreasing(instances):
            need = self.need[inst[0]]
            target = next((c for c in sorted(containers)
                           if len(containers[c]) < self.max_instances
                           and (used[c] + need).fits(self.limit)), None)
            if target is None:
                target = max(containers, default=-1) + 1
                containers[target], used[target] = [], NOTHING
            containers[target].append(inst)
            used[target] = used[target] + need


def first_fit_decreasing(plan: LogicalPlan) -> PackingPlan:
    containers: dict[int, list[tuple[str, int]]] = {}
    FirstFit(plan).place(containers, _instances(plan))
    return _packed(plan, containers)


def algorithm(plan: LogicalPlan) -> str:
    name = plan.config.get(ALGORITHM, ROUND_ROBIN)
    if name not in (ROUND_ROBIN, FFD):
        msg = f"{where(plan.name)}: config {ALGORITHM!r} expects {ROUND_ROBIN!r} or {FFD!r}, " \
              f"received {name!r}"
        raise ConfigError(msg)
    return name


def pack(plan: LogicalPlan, containers: int) -> PackingPlan:
    """The packing of a new topology by its algorithm (`containers`: round robin's count)."""
    if algorithm(plan) == FFD:
        return first_fit_decreasing(plan)
    return round_robin(plan, containers)


def repack(old: PackingPlan, plan: LogicalPlan, containers: int | None = None) -> PackingPlan:
    """`plan`'s packing moving as little as possible from `old`: surviving instances stay,
    new ones go (ffd) to the first container they fit in or (round robin) to the least
    loaded one. `containers`, when it differs from the current count, packs anew (round
    robin over that many; ffd with at least that many containers). Container 0, home of
    the topology master, is kept even if it ends up with no task."""
    wanted = set(_instances(plan))
    if containers is not None and containers != len(old.containers):
        if algorithm(plan) == ROUND_ROBIN:
            return round_robin(plan, containers)
        fresh: dict[int, list[tuple[str, int]]] = {c: [] for c in range(containers)}
        FirstFit(plan).place(fresh, _instances(plan))
        return _packed(plan, {c: i for c, i in fresh.items() if i or c == 0})
    kept: dict[int, list[tuple[str, int]]] = {c.id: [] for c in old.containers}
    for inst, cid in old.placement().items():
        if inst in wanted:
            kept[cid].append(inst)
    new = [i for i in _instances(plan) if i not in old.placement()]
    if algorithm(plan) == FFD:
        FirstFit(plan).place(kept, new)
    else:
        for inst in new:
            least = min(kept, key=lambda c: (len(kept[c]), c))
            kept[least].append(inst)
    return _packed(plan, {c: i for c, i in kept.items() if i or c == 0})


def resources_of(plan: LogicalPlan, packing: PackingPlan) -> dict[int, Resources]:
    """What each container's instances need (ffd's accounting; for status and tests)."""
    need = FirstFit(plan).need
    return {c.id: sum((need[i.component] for i in c.instances), NOTHING)
            for c in packing.containers}
