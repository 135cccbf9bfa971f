"""HB006: groupings and streams in heronpy's terms.

heronpy names Storm's global grouping `LOWEST` and has no local-or-shuffle (its alias is
shuffle). It rejects direct streams (`Stream(direct=True)` raises when the class is
created), direct groupings and Java custom groupings (the Topology class does not
load). So that the module still imports, each becomes the nearest declaration heronpy
accepts (a plain stream; a shuffle grouping), marked, and the class holding it refuses
to run with the marker's text (`@unported`): a topology that uses it fails to load, the
project's other topologies run.
"""

from __future__ import annotations

import libcst as cst

from ..analysis import LIBRARIES, Index, ModuleInfo
from ..rule import Rule, dotted, drop_arg, keyword

RENAMED = {"GLOBAL": "LOWEST", "LOCAL_OR_SHUFFLE": "SHUFFLE"}
DIRECT = ("heronpy has no direct grouping: declared here as SHUFFLE, and this topology "
          "refuses to run until it groups by a key the emitter chooses (Grouping.fields)")
JAVA = ("heronpy runs no Java custom groupings: {call} is declared here as SHUFFLE, and "
        "this topology refuses to run until it uses an ICustomGrouping (Grouping.custom())")
DIRECT_STREAM = ("heronpy has no direct streams: declared here as a plain stream, and "
                 "topologies using this component refuse to run until its direct emits "
                 "are routed by a key (a fields grouping)")
JAVA_GROUPINGS = ("custom_object", "custom_serialized")


class GroupingsRule(Rule):
    ID = "HB006"
    NAME = "groupings"
    DESCRIPTION = ("grouping names heronpy uses; direct streams and groupings, Java "
                   "groupings declared as heronpy accepts, marked, refusing to run")

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
        if member == "DIRECT":
            self.refuse(original_node, DIRECT)
            return updated_node.with_changes(attr=cst.Name("SHUFFLE"))
        return updated_node

    def leave_Call(self, original_node: cst.Call,
                   updated_node: cst.Call) -> cst.BaseExpression:
        member = self._library(original_node.func, "Grouping")
        if member in JAVA_GROUPINGS and isinstance(updated_node.func, cst.Attribute):
            call = cst.Module([]).code_for_node(original_node)
            self.refuse(original_node, JAVA.format(call=" ".join(call.split())))
            return updated_node.func.with_changes(attr=cst.Name("SHUFFLE"))
        name = dotted(original_node.func)
        parts = self.module_info.resolve(name).split(".") if name else []
        if not parts or parts[0] not in LIBRARIES or parts[-1] != "Stream":
            return updated_node
        direct = keyword(original_node, "direct")
        if direct is None and len(original_node.args) >= 3 and \
                original_node.args[2].keyword is None:
            direct = original_node.args[2]
        if direct is None or (isinstance(direct.value, cst.Name)
                              and direct.value.value == "False"):
            return updated_node
        self.refuse(original_node, DIRECT_STREAM)
        at = original_node.args.index(direct)
        return updated_node.with_changes(args=drop_arg(updated_node.args, at))
