"""HB005: the parts of pystorm's component API heronpy has differently or not at all.

`emit(stream=None)` means the default stream to pystorm and breaks heronpy's schema
check, so it goes. What has no heronpy counterpart gets a marker: task ids returned by
emit (heronpy returns them for direct and custom groupings only), direct emits, pystorm's
`raise_exception`, `report_metric` and protocol methods, the context read as a dict, and
an overridden `__init__` (heronpy constructs components with a delegate).
"""

from __future__ import annotations

import libcst as cst

from ..analysis import COMPONENTS, Index, ModuleInfo
from ..rule import Rule, is_self_call, keyword

NO_EQUIVALENT = {
    "raise_exception": "heronpy has no raise_exception; log the error and raise",
    "report_metric": "heronpy reports metrics through context.register_metric(name, "
                     "metric, seconds) instead of report_metric",
    "read_tuple": "heronpy has no protocol methods; tuples arrive in process()",
    "read_message": "heronpy has no protocol methods",
    "send_message": "heronpy has no protocol methods",
    "read_handshake": "heronpy has no protocol methods",
}


class ComponentApiRule(Rule):
    ID = "HB005"
    NAME = "component-api"
    DESCRIPTION = "emit arguments and the pystorm component API heronpy lacks"

    @classmethod
    def applies(cls, index: Index, module: ModuleInfo) -> bool:
        return bool(index.kinds_in(module) & COMPONENTS)

    def _in_component(self) -> bool:
        return self.kind() in COMPONENTS

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        if not self._in_component():
            return updated_node
        for method, reason in NO_EQUIVALENT.items():
            if is_self_call(original_node, method):
                self.todo(original_node, reason)
                return updated_node
        if not is_self_call(original_node, "emit"):
            return updated_node
        if keyword(original_node, "direct_task") is not None:
            self.todo(original_node, "heronpy does not route direct emits (direct grouping "
                      "is not supported); route with a fields grouping on a task key")
        need = keyword(original_node, "need_task_ids")
        if need is not None and not _is_false(need.value) and \
                self._statement_reads_result(original_node):
            self.todo(original_node, "heronpy's emit returns task ids only for direct and "
                      "custom groupings (a bolt's emit returns None)")
        stream = keyword(original_node, "stream")
        if stream is not None and isinstance(stream.value, cst.Name) and \
                stream.value.value == "None":
            self.converted(original_node, "dropped emit(stream=None): heronpy's default "
                           "stream is 'default'")
            return updated_node.with_changes(args=_without(list(updated_node.args), "stream"))
        return updated_node

    def _statement_reads_result(self, call: cst.Call) -> bool:
        statement = self._statements[-1] if self._statements else None
        if not isinstance(statement, cst.SimpleStatementLine):
            return True
        return not any(isinstance(s, cst.Expr) and s.value is call for s in statement.body)

    def leave_Subscript(self, original_node: cst.Subscript,
                        updated_node: cst.Subscript) -> cst.Subscript:
        value = original_node.value
        is_context = (isinstance(value, cst.Attribute) and value.attr.value == "context"
                      and isinstance(value.value, cst.Name) and value.value.value == "self")
        if self._in_component() and is_context:
            self.todo(original_node, "heronpy's context is a TopologyContext, not a dict: "
                      "use get_task_id(), get_component_id(), get_component_tasks(id), "
                      "get_this_sources()")
        return updated_node

    def leave_FunctionDef(self, original_node: cst.FunctionDef,
                          updated_node: cst.FunctionDef) -> cst.FunctionDef:
        if (original_node.name.value == "__init__" and len(self._classes) == 1
                and self._in_component()):
            self.todo(original_node, "heronpy constructs components as Component(delegate); "
                      "move this set-up into initialize()")
        return updated_node


def _is_false(value: cst.BaseExpression) -> bool:
    return isinstance(value, cst.Name) and value.value == "False"


def _without(args: list[cst.Arg], name: str) -> list[cst.Arg]:
    """`args` less the keyword `name`; the argument before a dropped last one takes its
    comma (none, or a trailing one)."""
    at = next(i for i, a in enumerate(args) if a.keyword is not None and a.keyword.value == name)
    dropped = args.pop(at)
    if at == len(args) and args:
        args[-1] = args[-1].with_changes(comma=dropped.comma)
    return args
