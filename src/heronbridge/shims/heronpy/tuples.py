"""The tuple a heronpy bolt's `process` receives.

Heron's instance hands bolts a `HeronTuple` with `id, component, stream, task, values,
creation_time, roots` (a namedtuple in Heron's instance; heronpy 0.20.5 itself ships
only the plain `Tuple` and the tick constants). This one has the same attributes, built
for the per-tuple path: it holds the runtime's input tuple as `roots` (what acking
needs: in Heron the tuple's root ids, here the runtime tuple carrying its tree's roots
and edge), copies `values` (a list) and the creation time, and reads `component`,
`stream` and `task` from the runtime tuple when asked; `id` is a string unique within
the task, made when first read. `task` is the emitting task, as Storm shows it (Heron's
instance put the root spout's task there). Unlike Heron's namedtuple it does not index
or unpack; equality is identity, so tuples can key dicts and sets.
"""

from __future__ import annotations

import itertools
import time
from operator import attrgetter
from typing import Any

import msgspec
from heronpy.api.tuple import TupleHelper

TICK_ID = TupleHelper.TICK_TUPLE_ID  # "__tick": a tick's id and stream
TICK_COMPONENT = TupleHelper.TICK_SOURCE_COMPONENT  # "__system"

_ids = map(str, itertools.count(1))


class HeronTuple(msgspec.Struct, eq=False, gc=False):
    roots: Any
    values: Any
    creation_time: float
    _id: Any = None

    component = property(attrgetter("roots.component"))
    stream = property(attrgetter("roots.stream"))
    task = property(attrgetter("roots.task"))

    @property
    def id(self) -> str:
        tup_id = self._id
        if tup_id is None:
            tup_id = self._id = next(_ids)
        return tup_id

    def __repr__(self) -> str:
        return (f"HeronTuple(id={self.id!r}, component={self.component!r}, "
                f"stream={self.stream!r}, task={self.task!r}, values={self.values!r})")


class TickTuple(HeronTuple):
    """A tick as Heron's timer makes it: no values, no roots, never acked."""

    id = TICK_ID
    component = TICK_COMPONENT
    stream = TICK_ID
    task = None


def tick() -> TickTuple:
    return TickTuple(None, None, time.time())
