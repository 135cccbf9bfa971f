"""The logical plan: components, their streams, how they subscribe, and validation.

This is the runtime's own model of a topology. Loaders for what users already have
(streamparse projects, heronpy topologies, Flux) all produce one of these.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..config import TopologyConfig
from ..errors import PlanError, where

DEFAULT_STREAM = "default"

SHUFFLE = "shuffle"
FIELDS = "fields"
ALL = "all"
GLOBAL = "global"
NONE = "none"
DIRECT = "direct"
LOCAL_OR_SHUFFLE = "local_or_shuffle"
PARTIAL_KEY = "partial_key"
CUSTOM = "custom"
GROUPING_KINDS = (SHUFFLE, FIELDS, ALL, GLOBAL, NONE, DIRECT, LOCAL_OR_SHUFFLE, PARTIAL_KEY,
                  CUSTOM)

SPOUT = "spout"
BOLT = "bolt"


def import_path_of(obj: Any) -> str:
    """`module:qualname` for a class or function, so another process can import it."""
    module = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None)
    if not module or not qualname or "<locals>" in qualname:
        msg = (f"expected a class or function defined at module level, received {obj!r} "
               "(other processes must be able to import it)")
        raise PlanError(msg)
    if module == "__main__":
        import sys
        from pathlib import Path

        main_file = getattr(sys.modules["__main__"], "__file__", None)
        if not main_file:
            msg = f"{qualname} is defined in an interactive session; define it in a module file"
            raise PlanError(msg)
        module = Path(main_file).stem
    return f"{module}:{qualname}"


def resolve_import_path(path: str) -> Any:
    """Import `module:qualname` (or `module.attr`) and return the object."""
    module_name, sep, qualname = path.partition(":")
    if not sep:
        module_name, _, qualname = path.rpartition(".")
    obj = importlib.import_module(module_name)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


@dataclass(frozen=True)
class Grouping:
    """How a subscriber's tasks share the tuples of one stream."""

    kind: str
    fields: tuple[str, ...] = ()
    custom: str | None = None  # import path of a custom grouping
    # The groupings without arguments, set below the class.
    SHUFFLE: ClassVar[Grouping]
    ALL: ClassVar[Grouping]
    GLOBAL: ClassVar[Grouping]
    NONE: ClassVar[Grouping]
    DIRECT: ClassVar[Grouping]
    LOCAL_OR_SHUFFLE: ClassVar[Grouping]

    @staticmethod
    def by_fields(*names: str | Iterable[str]) -> Grouping:
        return Grouping(FIELDS, _names(names))

    @staticmethod
    def partial_key(*names: str | Iterable[str]) -> Grouping:
        return Grouping(PARTIAL_KEY, _names(names))

    @staticmethod
    def custom_grouping(target: str | Callable) -> Grouping:
        return Grouping(CUSTOM, (), target if isinstance(target, str) else import_path_of(target))

    def __str__(self) -> str:
        if self.kind in (FIELDS, PARTIAL_KEY):
            return f"{self.kind}({', '.join(self.fields)})"
        if self.kind == CUSTOM:
            return f"custom({self.custom})"
        return self.kind


def _names(names: tuple) -> tuple[str, ...]:
    if len(names) == 1 and not isinstance(names[0], str):
        names = tuple(names[0])
    return tuple(names)


Grouping.SHUFFLE = Grouping(SHUFFLE)
Grouping.ALL = Grouping(ALL)
Grouping.GLOBAL = Grouping(GLOBAL)
Grouping.NONE = Grouping(NONE)
Grouping.DIRECT = Grouping(DIRECT)
Grouping.LOCAL_OR_SHUFFLE = Grouping(LOCAL_OR_SHUFFLE)


@dataclass(frozen=True)
class Stream:
    """One named output stream and the names of its fields."""

    name: str = DEFAULT_STREAM
    fields: tuple[str, ...] = ()
    direct: bool = False


@dataclass(frozen=True)
class Input:
    """A subscription: this bolt reads `stream` of `component` grouped by `grouping`."""

    component: str
    stream: str
    grouping: Grouping


@dataclass
class ComponentSpec:
    """A spout or bolt: what runs, how many tasks, what it emits and reads."""

    name: str
    kind: str
    class_path: str
    parallelism: int = 1
    outputs: dict[str, Stream] = field(default_factory=dict)
    inputs: list[Input] = field(default_factory=list)
    config: dict[str, Any] = field(default_factory=dict)

    @property
    def is_spout(self) -> bool:
        return self.kind == SPOUT


@dataclass
class LogicalPlan:
    """A whole topology as the runtime sees it."""

    name: str
    components: dict[str, ComponentSpec]
    config: dict[str, Any] = field(default_factory=dict)
    python_path: list[str] = field(default_factory=list)
    # System components that take task ids but run no process (Storm's `__acker`), so that
    # task ids line up with a system that does run them.
    reserved: dict[str, int] = field(default_factory=dict)

    def component_config(self, name: str) -> dict[str, Any]:
        """The topology config overlaid with one component's own config."""
        return {**self.config, **self.components[name].config}

    def subscribers(self, component: str, stream: str) -> list[tuple[str, Grouping]]:
        """(bolt, grouping) for every subscription to `component`'s `stream`, in name order."""
        out = []
        for name in sorted(self.components):
            for inp in self.components[name].inputs:
                if inp.component == component and inp.stream == stream:
                    out.append((name, inp.grouping))
        return out

    def validate(self) -> LogicalPlan:
        """Refuse a plan the runtime cannot run; every message names the component at fault."""
        topo = self.name
        if not isinstance(topo, str) or not topo or "/" in topo or topo.startswith("."):
            msg = f"a topology name must be a non-empty string without '/', received {topo!r}"
            raise PlanError(msg)
        if not any(c.is_spout for c in self.components.values()):
            msg = f"{where(topo)}: expected at least one spout, received none"
            raise PlanError(msg)
        TopologyConfig.read(self.config, topo)
        for name, spec in self.components.items():
            _validate_component(self, name, spec)
            # A bad per-component value is refused here, not found by its task at start.
            TopologyConfig.read(self.component_config(name), topo, name)
        for name, tasks in self.reserved.items():
            if name in self.components or not isinstance(tasks, int) or tasks < 0:
                msg = f"{where(topo, name)}: reserved system component clashes or has bad size"
                raise PlanError(msg)
        _refuse_cycles(self)
        return self


def _validate_component(plan: LogicalPlan, name: str, spec: ComponentSpec) -> None:
    loc = where(plan.name, name)
    if not name or not isinstance(name, str) or name.startswith("__"):
        msg = f"{loc}: component names must be non-empty and not start with '__'"
        raise PlanError(msg)
    if spec.kind not in (SPOUT, BOLT):
        msg = f"{loc}: expected kind 'spout' or 'bolt', received {spec.kind!r}"
        raise PlanError(msg)
    if isinstance(spec.parallelism, bool) or not isinstance(spec.parallelism, int) \
            or spec.parallelism < 1:
        msg = f"{loc}: parallelism must be an integer >= 1, received {spec.parallelism!r}"
        raise PlanError(msg)
    if not spec.class_path or ":" not in spec.class_path:
        msg = f"{loc}: expected a class path 'module:Class', received {spec.class_path!r}"
        raise PlanError(msg)
    for sname, stream in spec.outputs.items():
        if sname != stream.name or not sname or sname.startswith("__"):
            msg = f"{loc}: stream names must be non-empty and not start with '__', got {sname!r}"
            raise PlanError(msg)
        if len(set(stream.fields)) != len(stream.fields):
            msg = f"{loc}: stream {sname!r} declares a field twice: {list(stream.fields)}"
            raise PlanError(msg)
    if spec.is_spout and spec.inputs:
        msg = f"{loc}: a spout cannot have inputs, received {len(spec.inputs)}"
        raise PlanError(msg)
    if not spec.is_spout and not spec.inputs:
        msg = f"{loc}: a bolt needs at least one input, received none"
        raise PlanError(msg)
    for inp in spec.inputs:
        _validate_input(plan, loc, inp)


def _validate_input(plan: LogicalPlan, loc: str, inp: Input) -> None:
    source = plan.components.get(inp.component)
    if source is None:
        msg = (f"{loc}: subscribes to unknown component {inp.component!r}; "
               f"expected one of {sorted(plan.components)}")
        raise PlanError(msg)
    stream = source.outputs.get(inp.stream)
    if stream is None:
        msg = (f"{loc}: subscribes to unknown stream {inp.stream!r} of {inp.component!r}; "
               f"expected one of {sorted(source.outputs)}")
        raise PlanError(msg)
    grouping = inp.grouping
    if not isinstance(grouping, Grouping) or grouping.kind not in GROUPING_KINDS:
        msg = f"{loc}: expected a grouping among {GROUPING_KINDS}, received {grouping!r}"
        raise PlanError(msg)
    if grouping.kind == FIELDS and not grouping.fields:
        msg = f"{loc}: fields grouping on {inp.component}:{inp.stream} names no fields"
        raise PlanError(msg)
    for f in grouping.fields:
        if f not in stream.fields:
            msg = (f"{loc}: groups {inp.component}:{inp.stream} by unknown field {f!r}; "
                   f"the stream's fields are {list(stream.fields)}")
            raise PlanError(msg)
    if (grouping.kind == DIRECT) != stream.direct:
        msg = (f"{loc}: {grouping.kind} grouping on stream {inp.component}:{inp.stream}, "
               f"which is {'a direct' if stream.direct else 'not a direct'} stream; "
               "direct streams take direct grouping and only direct grouping")
        raise PlanError(msg)
    if grouping.kind == CUSTOM and not grouping.custom:
        msg = f"{loc}: custom grouping on {inp.component}:{inp.stream} names no callable"
        raise PlanError(msg)


def _refuse_cycles(plan: LogicalPlan) -> None:
    downstream: dict[str, set[str]] = {n: set() for n in plan.components}
    for name, spec in plan.components.items():
        for inp in spec.inputs:
            downstream[inp.component].add(name)
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(downstream[node]):
            if state.get(nxt) == 1:
                cycle = [*path[path.index(nxt):], nxt]
                msg = (f"{where(plan.name, nxt)}: the topology has a cycle "
                       f"({' -> '.join(cycle)}); expected a directed acyclic graph")
                raise PlanError(msg)
            if nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for name in sorted(plan.components):
        if name not in state:
            visit(name, [name])


def as_outputs(outputs: Mapping | Iterable | None) -> dict[str, Stream]:
    """Normalise output declarations: a field list, Streams, or {stream: fields}."""
    if outputs is None:
        return {}
    if isinstance(outputs, Stream):
        return {outputs.name: outputs}
    if isinstance(outputs, Mapping):
        result = {}
        for name, decl in outputs.items():
            if isinstance(decl, Stream):
                result[name] = Stream(name, tuple(decl.fields), decl.direct)
            else:
                result[name] = Stream(name, tuple(decl))
        return result
    items = list(outputs)
    if all(isinstance(i, str) for i in items):
        return {DEFAULT_STREAM: Stream(DEFAULT_STREAM, tuple(items))}
    result = {}
    for item in items:
        if not isinstance(item, Stream):
            msg = f"expected field names or Stream objects as outputs, received {item!r}"
            raise PlanError(msg)
        result[item.name] = item
    return result
