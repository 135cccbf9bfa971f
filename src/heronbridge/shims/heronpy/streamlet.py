"""heronpy 0.20.5's Streamlet API, repaired where it cannot run as shipped, and a sink.

Several Streamlet operators of heronpy 0.20.5 fail before they produce anything (on
Heron too); the import hook (imports.py) repairs their modules as they load, so a
topology written for heronpy runs as its author meant it:

- `consume(f)`: ConsumeStreamlet is built with the function but takes only its parent,
  and its bolt is never given the function;
- `transform(op)`: TransformBolt calls `self.transform_operator`, kept as
  `_transform_operator`;
- `outer_join(...)`: JoinStreamlet refuses the OUTER type its bolt implements;
- `repartition(n, f)` and `clone(n)`: the function check calls `inspect.getargspec`
  (gone in Python 3.11; its answer's length is always 4, so no function ever passed),
  the default function takes one argument where the grouping passes two, and the
  grouping's `prepare` logs through a logger it does not have. Repaired as Heron's Java
  API defines it: `f(element, num_partitions)` returns a partition or a list of them;
  without `f`, elements go round-robin;
- `reduce_by_window(...)`: its grouping accepts only (key, value) pairs and spreads
  them by key, so no window sees all its elements: they all go to its first task.

`to_sink(sink)` (Heron's Java `toSink`) is missing from heronpy altogether: it is added
here, with `Sink` (sink.py).

This module imports no Streamlet module itself: it runs while they load.
"""

from __future__ import annotations

import inspect
import itertools
from collections.abc import Iterable
from types import ModuleType
from typing import Any

from heronbridge.runtime.grouping.javahash import java_hash

from .stages import build_bolt

# Modules the import hook hands to `repair` once heronpy's own code has run.
REPAIRED = ("heronpy.streamlet.streamlet", "heronpy.streamlet.impl.consumebolt",
            "heronpy.streamlet.impl.transformbolt", "heronpy.streamlet.impl.joinbolt",
            "heronpy.streamlet.impl.repartitionbolt",
            "heronpy.streamlet.impl.reducebykeyandwindowbolt",
            "heronpy.streamlet.impl.reducebywindowbolt")


def repair(module: ModuleType) -> None:
    name = module.__name__.rsplit(".", 1)[-1]
    globals()[f"_repair_{name}"](module)


# -- the repairs ----------------------------------------------------------------------


def _repair_streamlet(module: ModuleType) -> None:
    streamlet = module.Streamlet
    shipped_repartition = streamlet.repartition

    def repartition(self: Any, num_partitions: int, repartition_function: Any = None) -> Any:
        return shipped_repartition(self, num_partitions,
                                   repartition_function or RoundRobin())

    def to_sink(self: Any, sink: Any) -> None:
        """Hands each element of this streamlet to `sink.put`; returns nothing."""
        from .sink import SinkStreamlet

        self._add_child(SinkStreamlet(sink, self))

    streamlet.repartition = repartition
    streamlet.to_sink = to_sink


def _repair_consumebolt(module: ModuleType) -> None:
    consume_streamlet, consume_bolt = module.ConsumeStreamlet, module.ConsumeBolt
    shipped_init = consume_streamlet.__init__

    def __init__(self: Any, consume_function: Any, parent: Any) -> None:
        shipped_init(self, parent)
        if not callable(consume_function):
            msg = "Consume function has to be callable"
            raise RuntimeError(msg)
        self._consume_function = consume_function

    def _build_this(self: Any, builder: Any, stage_names: set) -> bool:
        return build_bolt(self, builder, stage_names, "consume", consume_bolt,
                           {consume_bolt.CONSUMEFUNCTION: self._consume_function})

    consume_streamlet.__init__ = __init__
    consume_streamlet._build_this = _build_this


def _repair_transformbolt(module: ModuleType) -> None:
    def process(self: Any, tup: Any) -> None:
        self._transform_operator.transform(tup)
        self.processed += 1
        self.ack(tup)

    module.TransformBolt.process = process


def _repair_joinbolt(module: ModuleType) -> None:
    join_streamlet, outer = module.JoinStreamlet, module.JoinBolt.OUTER
    shipped_init = join_streamlet.__init__

    def __init__(self: Any, join_type: int, *args: Any) -> None:
        shipped_init(self, module.JoinBolt.INNER if join_type == outer else join_type, *args)
        self._join_type = join_type

    join_streamlet.__init__ = __init__
    _stable_keys(module.JoinGrouping)


def _repair_reducebykeyandwindowbolt(module: ModuleType) -> None:
    _stable_keys(module.ReduceGrouping)


def _repair_reducebywindowbolt(module: ModuleType) -> None:
    """reduce_by_window reduces every element of a window to one result, but its
    grouping demands (key, value) pairs and spreads them by key: every element goes to
    the first task instead, whose window then holds them all."""

    def choose_tasks(self: Any, values: list) -> list[int]:
        return [self.target_tasks[0]]

    module.ReduceGrouping.choose_tasks = choose_tasks


def _stable_keys(grouping: type) -> None:
    """The keyed groupings route by `hash(key)`, which differs between processes for
    strings (hash randomisation): two tasks emitting the same key would send it to two
    reducers. Routed by a hash every process agrees on instead."""

    def choose_tasks(self: Any, values: list) -> list[int]:
        data = values[0] if isinstance(values, list) and len(values) == 1 else None
        if not isinstance(data, Iterable) or len(data) != 2:
            msg = "Tuples going to a keyed window must be iterable of length 2"
            raise RuntimeError(msg)
        return [self.target_tasks[key_hash(data[0]) % len(self.target_tasks)]]

    grouping.choose_tasks = choose_tasks


def key_hash(key: Any) -> int:
    try:
        return java_hash(key)
    except Exception:  # noqa: BLE001 - not a JSON value: Python's hash (stable but for str)
        return hash(key)


def _repair_repartitionbolt(module: ModuleType) -> None:
    repartition_streamlet, grouping = module.RepartitionStreamlet, module.RepartitionCustomGrouping

    def __init__(self: Any, num_partitions: int, repartition_function: Any,
                 parent: Any) -> None:
        module.Streamlet.__init__(self)
        if not callable(repartition_function):
            msg = "Repartition function has to be callable"
            raise RuntimeError(msg)
        try:
            inspect.signature(repartition_function).bind(None, num_partitions)
        except TypeError as exc:
            msg = "Repartition function should take 2 arguments"
            raise RuntimeError(msg) from exc
        except ValueError:  # a builtin without a signature: let it be tried
            pass
        if not isinstance(parent, module.Streamlet):
            msg = "Parent of Repartition Streamlet has to be a Streamlet"
            raise RuntimeError(msg)
        self._parent = parent
        self._repartition_function = repartition_function
        self.set_num_partitions(num_partitions)

    def prepare(self: Any, context: Any, component: str, stream: str,
                target_tasks: list[int]) -> None:
        self.target_tasks = target_tasks

    def choose_tasks(self: Any, values: list) -> list[int]:
        tasks = self.target_tasks
        targets = self._repartition_function(values[0], len(tasks))
        if isinstance(targets, Iterable):
            return [tasks[t % len(tasks)] for t in targets]
        return [tasks[targets % len(tasks)]]

    repartition_streamlet.__init__ = __init__
    grouping.prepare = prepare
    grouping.choose_tasks = choose_tasks


class RoundRobin:
    """repartition's default: each element to the next partition (per emitting task)."""

    def __init__(self) -> None:
        self.turn = itertools.count()

    def __call__(self, element: Any, num_partitions: int) -> int:
        return next(self.turn) % num_partitions

    def __getstate__(self) -> dict:
        return {}  # a count does not pickle; every task starts its own

    def __setstate__(self, state: dict) -> None:
        self.turn = itertools.count()
