"""The tuple a bolt receives."""

from __future__ import annotations

from typing import Any

SYSTEM_COMPONENT = "__system"
TICK_STREAM = "__tick"


class Tuple:
    """One received tuple: where it came from and its values.

    `component`, `stream` and `task` name its source; `values` is the list of values in
    the order of the source stream's fields. Acking information is private to the runtime.
    """

    __slots__ = ("_ackval", "_fields", "_ids", "component", "stream", "task", "values")

    def __init__(self, component: str, stream: str, task: int, values: list,
                 fields: tuple[str, ...] = (), ids: list[int] | None = None) -> None:
        self.component = component
        self.stream = stream
        self.task = task
        self.values = values
        self._fields = fields
        self._ids = ids  # flat [root, edge, root, edge, ...] when the tuple is tracked
        self._ackval = 0  # XOR of the edges of tuples emitted anchored to this one

    @property
    def fields(self) -> tuple[str, ...]:
        return self._fields

    @property
    def is_tick(self) -> bool:
        return self.stream == TICK_STREAM and self.component == SYSTEM_COMPONENT

    def value(self, field: str) -> Any:
        """The value of one field by name (Storm's getValueByField)."""
        try:
            return self.values[self._fields.index(field)]
        except ValueError:
            msg = (f"tuple from {self.component}:{self.stream} has no field {field!r}; "
                   f"its fields are {list(self._fields)}")
            raise KeyError(msg) from None

    def __repr__(self) -> str:
        return (f"Tuple(component={self.component!r}, stream={self.stream!r}, "
                f"task={self.task}, values={self.values!r})")


def tick_tuple(freq_secs: float) -> Tuple:
    freq = int(freq_secs) if float(freq_secs).is_integer() else freq_secs
    return Tuple(SYSTEM_COMPONENT, TICK_STREAM, -1, [freq])
