"""The tuple a bolt receives."""

from __future__ import annotations

from functools import cache
from typing import Any, ClassVar

import msgspec

SYSTEM_COMPONENT = "__system"
TICK_STREAM = "__tick"

# `Tuple._root` values: 0 = not tracked, > 0 = the one root, MULTI = several roots.
UNTRACKED = 0
MULTI = -1


class Tuple(msgspec.Struct, array_like=True, eq=False, gc=False):
    """One received tuple: `values` in the order of its source stream's `fields`, and
    `component`, `stream` and `task` naming its source.

    Each source (task, stream) has its own subclass carrying those names, so a whole
    batch decodes straight from the wire into tuples, in C. Acking state is private: a
    tracked tuple holds its root and its edge, into which the edges of tuples emitted
    anchored to it are XORed; one with several roots holds MULTI and
    [XOR of anchored edges, root, edge, root, edge, ...]. Equality is identity, so tuples
    can key dicts and sets.
    """

    values: list
    _root: int = UNTRACKED
    _edge: Any = 0

    component: ClassVar[str] = ""
    stream: ClassVar[str] = "default"
    task: ClassVar[int] = -1
    fields: ClassVar[tuple[str, ...]] = ()

    @staticmethod
    def make(component: str, stream: str, task: int, values: list,
             fields: tuple[str, ...] = ()) -> Tuple:
        return tuple_class(component, stream, task, tuple(fields))(values)

    @property
    def is_tick(self) -> bool:
        return self.stream == TICK_STREAM and self.component == SYSTEM_COMPONENT

    def value(self, field: str) -> Any:
        """The value of one field by name (Storm's getValueByField)."""
        try:
            return self.values[self.fields.index(field)]
        except ValueError:
            msg = (f"tuple from {self.component}:{self.stream} has no field {field!r}; "
                   f"its fields are {list(self.fields)}")
            raise KeyError(msg) from None

    def __repr__(self) -> str:
        return (f"Tuple(component={self.component!r}, stream={self.stream!r}, "
                f"task={self.task}, values={self.values!r})")


@cache
def tuple_class(component: str, stream: str, task: int,
                fields: tuple[str, ...] = ()) -> type[Tuple]:
    """The Tuple subclass for one source; one per (task, stream) a bolt hears from."""
    name = f"Tuple_{component}_{stream}_{task}".replace("-", "_")
    return type(name, (Tuple,), {"component": component, "stream": stream, "task": task,
                                 "fields": fields, "__module__": __name__})


def tick_tuple(freq_secs: float) -> Tuple:
    freq = int(freq_secs) if float(freq_secs).is_integer() else freq_secs
    return tuple_class(SYSTEM_COMPONENT, TICK_STREAM, -1)([freq])
