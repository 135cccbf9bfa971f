"""An opt-in `state` for spouts and bolts, saved with each checkpoint: the mixin streamparse
(pystorm) components take from `heronbridge.shims.storm.state`, and the base of the
heronpy host's stateful components.

    from streamparse import Bolt
    from heronbridge.shims.storm.state import StatefulMixin

    class WordCounter(StatefulMixin, Bolt):
        def process(self, tup):
            word = tup.values.word
            self.state[word] = self.state.get(word, 0) + 1

`self.state` is a dict, there from `initialize` on. On heronbridge under
`topology.reliability.mode: EFFECTIVELY_ONCE` it is the state of the last consistent
checkpoint (empty at the first start), and what it holds when a checkpoint is taken is
saved with it: after a rollback a new instance of the class sees it again in
`initialize`. A spout keeps its source offset there, so it rewinds with everyone else; a
bolt keeps what it has computed, best keyed by the value its input is grouped by (as
above), so that every entry belongs to the task its key goes to. Values must pickle.
Mutate the dict (or the objects it holds); a rebound `self.state` is copied into the
checkpoint too. Override `pre_save(checkpoint_id)` to put into it, just before a save,
what lives elsewhere, and `post_save(checkpoint_id)` to publish, once the checkpoint
is complete, what it prepared (the second phase of a two-phase commit). (A
BatchingBolt's state also holds, from a checkpoint on, the tuples its batches held then,
under keys of the host's own type, PendingKey.)

On Storm, or on heronbridge in another mode, nothing is checkpointed: `self.state` is
an ordinary dict that starts empty in each process, and the component is at-least-once
as it was without the mixin. This module imports nothing beyond the standard library
and heronbridge's root: on Storm, `heronbridge` in the topology's virtualenv is all it
takes, and none of the runtime is loaded.
"""

from __future__ import annotations

from typing import Any

from .. import ShimError


class StatefulMixin:
    """Mixed in before a pystorm or streamparse Spout or Bolt (`class C(StatefulMixin,
    Bolt)`): the component gets `self.state`, saved with each checkpoint."""

    state: dict

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.state = {}  # what Storm gives: memory only, until a checkpointing host says

    def init_state(self, state: dict) -> None:
        """The runtime's call, before `initialize`: the dict of the last consistent
        checkpoint, which the runtime saves again at each checkpoint."""
        self.state = state

    def pre_save(self, checkpoint_id: str) -> None:
        """Called right before `self.state` is saved with checkpoint `checkpoint_id`."""

    def post_save(self, checkpoint_id: str) -> None:
        """Called once checkpoint `checkpoint_id` is complete (every task saved it):
        publish what was prepared for it (a transaction's records, offsets to commit).
        Not every checkpoint gets one: after a rollback `self.state` is the newest
        complete checkpoint's, so publish what it holds from `initialize` too."""


def is_stateful(component: Any) -> bool:
    """Whether a component takes the runtime's stateful contract: the mixin's, or its
    own `init_state(state)` (as heronpy's StatefulComponent has)."""
    return callable(getattr(component, "init_state", None))


def after_save(component: Any, checkpoint_id: str) -> None:
    """What a host does once checkpoint `checkpoint_id` is complete."""
    post_save = getattr(component, "post_save", None)
    if post_save is not None:
        post_save(checkpoint_id)


def before_save(component: Any, saved: dict, checkpoint_id: str) -> None:
    """What a host does before the runtime pickles `saved`, the dict it handed to the
    component's `init_state`: the component's `pre_save`, then `saved` made to hold the
    component's `state` if that is another mapping now (the component rebound it)."""
    pre_save = getattr(component, "pre_save", None)
    if pre_save is not None:
        pre_save(checkpoint_id)
    current = getattr(component, "state", saved)
    if current is not saved:
        try:
            items = dict(current)
        except (TypeError, ValueError) as exc:
            name = getattr(component, "component_name", None) or type(component).__name__
            msg = (f"topology {getattr(component, 'topology_name', None)!r}, component "
                   f"{name!r}, task {getattr(component, 'task_id', None)}: expected "
                   f"`self.state` to be a dict at checkpoint {checkpoint_id!r}, received "
                   f"{type(current).__name__}")
            raise ShimError(msg) from exc
        saved.clear()
        saved.update(items)
