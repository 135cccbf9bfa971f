"""TopologyBuilder: the runtime's own way to declare a topology in Python."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..errors import PlanError, where
from .logical import (
    BOLT,
    DEFAULT_STREAM,
    SHUFFLE,
    SPOUT,
    ComponentSpec,
    Grouping,
    Input,
    LogicalPlan,
    Stream,
    as_outputs,
    import_path_of,
)


class StreamRef:
    """`component["stream"]`: one stream of a declared component."""

    def __init__(self, component: str, stream: str) -> None:
        self.component = component
        self.stream = stream


class ComponentRef:
    """What `spout()` and `bolt()` return: usable as an input key, indexable by stream."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __getitem__(self, stream: str) -> StreamRef:
        return StreamRef(self.name, stream)


class TopologyBuilder:
    """Declare spouts and bolts, then `build()` a validated LogicalPlan.

    >>> b = TopologyBuilder("wordcount")
    >>> words = b.spout("words", "mymod:WordSpout", outputs=["word"])
    >>> _ = b.bolt("count", "mymod:CountBolt", inputs={words: Grouping.by_fields("word")}, par=2)
    >>> sorted(b.build().components)
    ['count', 'words']
    """

    def __init__(self, name: str, config: Mapping[str, Any] | None = None) -> None:
        self.name = name
        self.config: dict[str, Any] = dict(config or {})
        self._components: dict[str, ComponentSpec] = {}
        self._python_path: list[str] = []
        self._reserved: dict[str, int] = {}

    def spout(self, name: str, component: type | str, par: int = 1,
              outputs: Any = None, config: Mapping[str, Any] | None = None) -> ComponentRef:
        return self._add(name, SPOUT, component, par, outputs, config, [])

    def bolt(self, name: str, component: type | str, inputs: Any, par: int = 1,
             outputs: Any = None, config: Mapping[str, Any] | None = None) -> ComponentRef:
        return self._add(name, BOLT, component, par, outputs, config, self._inputs(name, inputs))

    def reserve(self, name: str, tasks: int) -> None:
        """Give a system component task ids without running it (see LogicalPlan.reserved)."""
        self._reserved[name] = tasks

    def add_python_path(self, entry: str | Path) -> None:
        entry = str(Path(entry).resolve())
        if entry not in self._python_path:
            self._python_path.append(entry)

    def build(self) -> LogicalPlan:
        plan = LogicalPlan(self.name, dict(self._components), dict(self.config),
                           list(self._python_path), dict(self._reserved))
        return plan.validate()

    def _add(self, name: str, kind: str, component: type | str, par: int, outputs: Any,
             config: Mapping[str, Any] | None, inputs: list[Input]) -> ComponentRef:
        if name in self._components:
            msg = f"{where(self.name, name)}: declared twice; component names must be unique"
            raise PlanError(msg)
        if isinstance(component, str):
            class_path = component
        else:
            class_path = import_path_of(component)
            self._remember_module_root(component)
            if outputs is None:
                outputs = getattr(component, "outputs", None)
        spec = ComponentSpec(name, kind, class_path, par, as_outputs(outputs), inputs,
                             dict(config or {}))
        self._components[name] = spec
        return ComponentRef(name)

    def _inputs(self, bolt: str, inputs: Any) -> list[Input]:
        if isinstance(inputs, (ComponentRef, StreamRef, str)):
            inputs = [inputs]
        if isinstance(inputs, Mapping):
            pairs = list(inputs.items())
        elif isinstance(inputs, Iterable):
            pairs = [(source, Grouping(SHUFFLE)) for source in inputs]
        else:
            msg = (f"{where(self.name, bolt)}: expected inputs as {{source: Grouping}} or a list "
                   f"of sources, received {inputs!r}")
            raise PlanError(msg)
        result = []
        for source, grouping in pairs:
            if isinstance(source, StreamRef):
                component, stream = source.component, source.stream
            elif isinstance(source, ComponentRef):
                component, stream = source.name, DEFAULT_STREAM
            elif isinstance(source, str):
                component, _, stream = source.partition(":")
                stream = stream or DEFAULT_STREAM
            else:
                msg = (f"{where(self.name, bolt)}: expected an input source (a component, "
                       f"component['stream'] or 'component:stream'), received {source!r}")
                raise PlanError(msg)
            if not isinstance(grouping, Grouping):
                msg = (f"{where(self.name, bolt)}: expected a Grouping for input "
                       f"{component}:{stream}, received {grouping!r}")
                raise PlanError(msg)
            result.append(Input(component, stream, grouping))
        return result

    def _remember_module_root(self, component: type) -> None:
        module = sys.modules.get(component.__module__)
        file = getattr(module, "__file__", None)
        if not file:
            return
        root = Path(file).resolve().parent
        depth = component.__module__.count(".")
        if component.__module__ == "__main__":
            depth = 0
        elif Path(file).name == "__init__.py":
            depth += 1
        for _ in range(depth):
            root = root.parent
        self.add_python_path(root)


__all__ = ["ComponentRef", "Stream", "StreamRef", "TopologyBuilder"]
