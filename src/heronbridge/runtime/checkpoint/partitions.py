"""Which saved state a task restores, when task ids or a component's size changed.

A checkpoint keeps one file per task, named by task id. Task ids follow Storm's rule, so
an update shifts them whenever a component sorted before this one changes size: a task
finds its state by its component index (the i-th saved task of its component). When the
component itself changed size, its state is repartitioned by key: every top-level key
goes to the task its fields grouping routes that key to, so the task that now receives a
word also holds its count.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from typing import Any

from ..errors import CheckpointError, where
from ..grouping.javahash import fields_index
from .storage import CheckpointStorage


def key_partition(key: Any, parallelism: int) -> int:
    """The component index a fields grouping sends a tuple keyed by `key` to (a tuple key
    stands for several grouping fields)."""
    return fields_index(list(key) if isinstance(key, tuple) else [key], parallelism)


def restored_state(storage: CheckpointStorage, checkpoint_id: str, component: str,
                   index: int, parallelism: int, keyed: bool,
                   loads: Callable[[bytes], Any] = pickle.loads) -> dict | None:
    """The state task `index` of `parallelism` restores, or None if its component saved
    none (a component without state)."""
    saved = storage.tasks(checkpoint_id, component)
    if not saved:
        return None
    if len(saved) == parallelism:
        return _read(storage, checkpoint_id, component, saved[index], loads)
    if not keyed:
        msg = (f"{where(storage.topology, component)}: checkpoint {checkpoint_id} holds the "
               f"state of {len(saved)} tasks and the component now has {parallelism}; "
               "expected its inputs to be fields-grouped, so its state can be repartitioned "
               "by key")
        raise CheckpointError(msg)
    state: dict = {}
    for task in saved:
        for key, value in _read(storage, checkpoint_id, component, task, loads).items():
            if key_partition(key, parallelism) == index:
                state[key] = value
    return state


def _read(storage: CheckpointStorage, checkpoint_id: str, component: str, task: int,
          loads: Callable[[bytes], Any]) -> dict:
    blob = storage.load(checkpoint_id, component, task)
    try:
        if blob is None:
            msg = "no state saved"
            raise CheckpointError(msg)
        state = loads(blob)
    except Exception as exc:
        msg = (f"{where(storage.topology, component, task)}: checkpoint {checkpoint_id} holds "
               f"state that cannot be read: {type(exc).__name__}: {exc}")
        raise CheckpointError(msg) from exc
    if not isinstance(state, dict):
        msg = (f"{where(storage.topology, component, task)}: checkpoint {checkpoint_id}: "
               f"expected a dict of state, received {type(state).__name__}")
        raise CheckpointError(msg)
    return state
