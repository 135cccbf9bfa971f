"""HB004: `tup.values.<field>` becomes `tup.values[<index>]`.

pystorm gives a bolt its tuple's values as a namedtuple of the source stream's fields;
heronpy gives a list. The index comes from the streams the tree's topologies feed the
bolt with (its spec's inputs, their components' `outputs`); a field that sits at
different places in different input streams, or a bolt no topology of the tree uses,
gets a marker.
"""

from __future__ import annotations

import libcst as cst

from ..analysis import BOLTS, COMPONENTS, STORM_PY, Index, ModuleInfo
from ..rule import Rule

NAMEDTUPLE = ("_asdict", "_fields", "_replace", "_make")
SEQUENCE = ("count", "index")


class TupleFieldsRule(Rule):
    ID = "HB004"
    NAME = "tuple-fields"
    DESCRIPTION = "tup.values.<field> as an index into heronpy's list of values"

    @classmethod
    def applies(cls, index: Index, module: ModuleInfo) -> bool:
        return bool(index.kinds_in(module) & COMPONENTS)

    def leave_Attribute(self, original_node: cst.Attribute,
                        updated_node: cst.Attribute) -> cst.BaseExpression:
        inner = original_node.value
        if not (isinstance(inner, cst.Attribute) and inner.attr.value == "values"):
            return updated_node
        kind = self.kind()
        if kind not in BOLTS or kind in STORM_PY:
            return updated_node
        field = original_node.attr.value
        if field in SEQUENCE:
            return updated_node
        if field in NAMEDTUPLE:
            self.todo(original_node, f"heronpy's tuple values are a list: .values.{field} "
                      "has no equivalent")
            return updated_node
        streams = self.index.input_fields(self.owner)
        if not streams:
            self.todo(original_node, f"cannot tell where field {field!r} sits: no topology "
                      "in the migrated tree feeds this bolt; index tup.values by position")
            return updated_node
        places = {fields.index(field) if field in fields else None for fields in streams}
        if len(places) != 1 or None in places:
            self.todo(original_node, f"field {field!r} is not at one place in every stream "
                      f"this bolt reads ({streams}); index tup.values by position")
            return updated_node
        index = places.pop()
        self.converted(original_node, f".values.{field} -> .values[{index}]")
        return cst.Subscript(
            value=updated_node.value,
            slice=[cst.SubscriptElement(cst.Index(cst.Integer(str(index))))])
