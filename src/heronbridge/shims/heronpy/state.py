"""heronpy's stateful API (`StatefulComponent`, `HashMapState`) on the runtime's checkpoints.

Under `topology.reliability.mode: EFFECTIVELY_ONCE` the loader hosts every heronpy
component in the stateful hosts below. The runtime calls `init_state(dict)` before
`open`/`prepare` with the dict of the last consistent checkpoint and pickles that very
dict after `pre_save(checkpoint_id)`. A component that is a heronpy `StatefulComponent`
gets, before its `initialize` (Heron's order), a `HashMapState` whose storage is that
dict: what it puts is exactly what the checkpoint holds. Its `pre_save` is called with
the checkpoint id, as Heron's instance calls it, or without when it takes none (heronpy's
abstract signature).

A window bolt's window, driven by windows.py, is saved under one key of the same dict
(`WINDOW`) and reopened after `initialize`, so a rollback restores open windows.
Components that are not stateful save an empty dict, as on Heron every instance of a
stateful topology checkpoints. The hosts add nothing to the per-tuple path.
"""

from __future__ import annotations

import inspect
from typing import Any

from heronpy.api.bolt.window_bolt import SlidingWindowBolt, TumblingWindowBolt
from heronpy.api.state.state import HashMapState
from heronpy.api.state.stateful_component import StatefulComponent

from heronbridge.runtime.api import Stateful

from ..common.state import StatefulMixin, before_save
from .host import HeronpyBolt, HeronpySpout

WINDOW = "heronbridge.window"  # the window driver's contents, beside the component's own
# heronpy's window bolts' own pre_save: it saves their `current_tuples`, which stays
# empty while windows.py drives the window.
_WINDOW_PRE_SAVES = (SlidingWindowBolt.pre_save, TumblingWindowBolt.pre_save)


class RuntimeState(HashMapState):
    """heronpy's HashMapState over the runtime's checkpointed dict. It also reads and
    writes as a mapping, as heronpy's own window bolts use their state
    (`'tuples' in state`, `state['tuples'] = ...`)."""

    def __init__(self, storage: dict) -> None:  # that dict itself, never a copy
        self._dict = storage

    def __contains__(self, key: Any) -> bool:
        return key in self._dict

    def __getitem__(self, key: Any) -> Any:
        return self._dict[key]

    def __setitem__(self, key: Any, value: Any) -> None:
        self._dict[key] = value

    def __delitem__(self, key: Any) -> None:
        del self._dict[key]

    def __iter__(self) -> Any:
        return iter(self._dict)

    def __len__(self) -> int:
        return len(self._dict)

    def __repr__(self) -> str:
        return f"RuntimeState({self._dict!r})"


def pre_save_call(user: Any) -> Any:
    """The component's pre_save as a function of the checkpoint id, or None (not a
    StatefulComponent, or one whose pre_save only saves what windows.py keeps itself)."""
    if not isinstance(user, StatefulComponent):
        return None
    method = user.pre_save
    if getattr(method, "__func__", None) in _WINDOW_PRE_SAVES:
        return None
    try:
        inspect.signature(method).bind("checkpoint-id")
    except TypeError:  # heronpy's abstract `pre_save(self)`
        return lambda checkpoint_id: method()
    except ValueError:  # no signature to read: Heron's call
        return method
    return method


class _Stateful(Stateful):
    """The runtime's stateful contract on a heronpy host (mixed in before the host)."""

    state: dict | None = None
    user: Any
    _pre_save: Any = None

    def init_state(self, state: dict) -> None:
        self.state = state  # the runtime's own dict: kept, never rebound

    def pre_save(self, checkpoint_id: str) -> None:
        if self._pre_save is not None:
            self._pre_save(checkpoint_id)
        window = getattr(self, "window", None)
        if window is not None:
            self.state[WINDOW] = window.save()

    def _init_user_state(self) -> None:
        """Before the component's `initialize`: its state, as Heron hands it over."""
        if self.state is None:  # started without a checkpoint (not by the runtime)
            self.state = {}
        if isinstance(self.user, StatefulComponent):
            self.user.init_state(RuntimeState(self.state))
            self._pre_save = pre_save_call(self.user)
        elif isinstance(self.user, StatefulMixin):
            # A streamparse component `heronbridge migrate` moved to heronpy keeps its
            # mixin: its `self.state` is the runtime's dict, as on the lean host.
            user, saved = self.user, self.state
            user.init_state(saved)
            self._pre_save = lambda checkpoint_id: before_save(user, saved, checkpoint_id)


class StatefulHeronpySpout(_Stateful, HeronpySpout):
    """HeronpySpout under EFFECTIVELY_ONCE: a StatefulComponent spout keeps its offsets
    in its state and resumes from them after a rollback."""


class StatefulHeronpyBolt(_Stateful, HeronpyBolt):
    """HeronpyBolt under EFFECTIVELY_ONCE: its state, and its open window, checkpointed."""

    def _initialized(self, config: dict) -> None:
        super()._initialized(config)
        saved = self.state.get(WINDOW)
        if self.window is not None and saved is not None:
            self.window.restore(saved)
