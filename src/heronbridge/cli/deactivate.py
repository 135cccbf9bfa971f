"""`heronbridge deactivate`: pause a topology's spouts."""

from __future__ import annotations

from typing import Any

from .activate import add_state_verb
from .options import Parents


def add_verb(verbs: Any, parents: Parents) -> None:
    add_state_verb(verbs, parents, "deactivate", False, "pause a topology's spouts")
