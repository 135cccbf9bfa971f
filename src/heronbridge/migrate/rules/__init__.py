"""The rules, in the order they run on each module.

The order matters: storm.py's module functions become methods before emits are
anchored; `initialize` and `process` are rewritten while the classes still derive from
streamparse (rules find components through the imports); imports go last.
"""

from __future__ import annotations

from ..rule import Rule
from .auto_ack import AutoAckRule
from .component_api import ComponentApiRule
from .config import ConfigRule
from .groupings import GroupingsRule
from .imports import ImportsRule
from .initialize import InitializeRule
from .specs import SpecsRule
from .storm_py import StormPyRule
from .tuple_fields import TupleFieldsRule

RULES: tuple[type[Rule], ...] = (
    StormPyRule,
    InitializeRule,
    AutoAckRule,
    TupleFieldsRule,
    ComponentApiRule,
    GroupingsRule,
    SpecsRule,
    ConfigRule,
    ImportsRule,
)
BY_ID = {rule.ID: rule for rule in RULES}


def select(ids: list[str] | None) -> tuple[type[Rule], ...]:
    """The rules named by `ids` (ids or names), in the fixed order; all when None."""
    if not ids:
        return RULES
    wanted = set()
    names = {rule.NAME: rule.ID for rule in RULES}
    for given in ids:
        key = given.upper() if given.upper() in BY_ID else names.get(given)
        if key is None:
            from .. import MigrateError

            known = ", ".join(f"{r.ID} ({r.NAME})" for r in RULES)
            msg = f"unknown rule {given!r}; expected one of {known}"
            raise MigrateError(msg)
        wanted.add(key)
    return tuple(rule for rule in RULES if rule.ID in wanted)
