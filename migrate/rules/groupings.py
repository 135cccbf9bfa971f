"""HB006: groupings and streams in heronpy's terms.

heronpy names Storm's global grouping `LOWEST` and has no local-or-shuffle (its alias is
shuffle); it rejects direct groupings and direct streams, and Java custom groupings.
"""

from __future__ import annotations

import libcst as cst

from ..analysis import LIBRARIES, Index, ModuleInfo
from ..rule import Rule, dotted, keyword

RENAMED = {"GLOBAL": "LOWEST", "LOCAL_OR_SHUFFLE": "SHUFFLE"}
UNSUPPORTED = {
    "DIRECT": "heronpy rejects direct groupings; subscribe with a fields grouping on a "
              "key the emitter chooses",
    "custom_object": "heronpy runs no Java custom groupings; write an ICustomGrouping and "
                     "use Grouping.custom()",
    "custom_serialized": "heronpy runs no Java custom groupings; write an ICustomGrouping "
                         "and use Grouping.custom()",
}


class GroupingsRule(Rule):
    ID = "HB006"
    NAME = "groupings"
    DESCRIPTION = "grouping names heronpy uses; direct and Java groupings marked"

    @classmethod
    def applies(cls, index: Index, module: ModuleInfo) -> bool:
        return module.uses_library

    def _library(self, node: cst.BaseExpression, owner: str) -> str | None:
        """The member name if `node` is `<library>.<owner>.<member>`."""
        name = dotted(node)
        if name is None:
            return None
        parts = self.module_info.resolve(name).split(".")
        if len(parts) >= 3 and parts[0] in LIBRARIES and parts[-2] == owner:
            return parts[-1]
        return None

    def leave_Attribute(self, original_node: cst.Attribute,
                        updated_node: cst.Attribute) -> cst.Attribute:
        member = self._library(original_node, "Grouping")
        if member in RENAMED:
            self.converted(original_node, f"Grouping.{member} -> Grouping.{RENAMED[member]}")
            return updated_node.with_changes(attr=cst.Name(RENAMED[member]))
        if member in UNSUPPORTED:
            self.todo(original_node, UNSUPPORTED[member])
        return updated_node

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        name = dotted(original_node.func)
        parts = self.module_info.resolve(name).split(".") if name else []
        if not parts or parts[0] not in LIBRARIES or parts[-1] != "Stream":
            return updated_node
        direct = keyword(original_node, "direct")
        if direct is None and len(original_node.args) >= 3 and \
                original_node.args[2].keyword is None:
            direct = original_node.args[2]
        if direct is not None and not (isinstance(direct.value, cst.Name)
                                       and direct.value.value == "False"):
            self.todo(original_node, "heronpy rejects direct streams (Stream(direct=True) "
                      "raises); declare a plain stream and group it by a key")
        return updated_node
