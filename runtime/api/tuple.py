"""The tuple a bolt receives."""

from __future__ import annotations

from typing import Any

import msgspec

SYSTEM_COMPONENT = "__system"
TICK_STREAM = "__tick"

# `Tuple._root` values: 0 = not tracked, > 0 = the one root, MULTI = several roots.
UNTRACKED = 0
MULTI = -1


class Source:
    """Where a batch of tuples came from; shared by every tuple of the batch."""

    __slots__ = ("component", "fields", "stream", "task")

    def __init__(self, component: str, stream: str, task: int,
                 fields: tuple[str, ...] = ()) -> None:
        self.component = component
        self.stream = stream
        self.task = task
        self.fields = fields


class Tuple(msgspec.Struct, eq=False, gc=False):
    """One received tuple: `values` in the order of its source stream's `fields`, and
    `component`, `stream` and `task` naming the source.

    Acking state is private. A tracked tuple holds its root and its edge, into which the
    edges of tuples emitted anchored to it are XORed; one with several roots holds
    [XOR of anchored edges, root, edge, root, edge, ...] instead.

    A C-level struct: built once per received tuple, it costs half a slotted class.
    Equality is identity, so tuples can key dicts and sets.
    """

    _source: Source
    values: list
    _root: int = UNTRACKED
    _edge: Any = 0

    @classmethod
    def make(cls, component: str, stream: str, task: int, values: list,
             fields: tuple[str, ...] = ()) -> Tuple:
        return cls(Source(component, stream, task, tuple(fields)), values)

    @property
    def component(self) -> str:
        return self._source.component

    @property
    def stream(self) -> str:
        return self._source.stream

    @property
    def task(self) -> int:
        return self._source.task

    @property
    def fields(self) -> tuple[str, ...]:
        return self._source.fields

    @property
    def is_tick(self) -> bool:
        return self._source.stream == TICK_STREAM and self._source.component == SYSTEM_COMPONENT

    def value(self, field: str) -> Any:
        """The value of one field by name (Storm's getValueByField)."""
        try:
            return self.values[self._source.fields.index(field)]
        except ValueError:
            msg = (f"tuple from {self.component}:{self.stream} has no field {field!r}; "
                   f"its fields are {list(self.fields)}")
            raise KeyError(msg) from None

    def __repr__(self) -> str:
        return (f"Tuple(component={self.component!r}, stream={self.stream!r}, "
                f"task={self.task}, values={self.values!r})")


_TICK = Source(SYSTEM_COMPONENT, TICK_STREAM, -1, ())


def tick_tuple(freq_secs: float) -> Tuple:
    freq = int(freq_secs) if float(freq_secs).is_integer() else freq_secs
    return Tuple(_TICK, [freq])
