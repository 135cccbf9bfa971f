"""HB001: Storm's storm.py module functions become the component's own methods.

storm.py components call module-level `storm.emit/ack/fail/log` and name their spout
method `nextTuple`; heronpy components call `self.emit` & co and implement
`next_tuple`. A `if __name__ == "__main__": X().run()` entry point goes: Heron starts
components itself.
"""

from __future__ import annotations

import libcst as cst

from ..analysis import COMPONENTS, STORM_PY, Index, ModuleInfo
from ..rule import Rule, dotted

LEVELS = {"logTrace": "trace", "logDebug": "debug", "logInfo": "info", "logWarn": "warn",
          "logError": "error"}
KEYWORDS = {"id": "tup_id", "directTask": "direct_task"}
SAME = ("emit", "ack", "fail", "log")


class StormPyRule(Rule):
    ID = "HB001"
    NAME = "storm-py"
    DESCRIPTION = "storm.py's module functions and camelCase methods as heronpy methods"

    @classmethod
    def applies(cls, index: Index, module: ModuleInfo) -> bool:
        return any(q.split(".", 1)[0] == "storm" for q in module.imports.values())

    def _storm_function(self, node: cst.Call) -> str | None:
        name = dotted(node.func)
        if name is None:
            return None
        qualified = self.module_info.resolve(name)
        head, _, function = qualified.partition(".")
        return function if head == "storm" and "." not in function else None

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        function = self._storm_function(original_node)
        if function is None:
            return updated_node
        if self.kind() not in STORM_PY:
            self.todo(original_node, f"storm.{function}() outside a storm.py component "
                      "class: call the component's own method instead")
            return updated_node
        if function in SAME or function in LEVELS:
            args = [a.with_changes(keyword=cst.Name(KEYWORDS[a.keyword.value]))
                    if a.keyword is not None and a.keyword.value in KEYWORDS else a
                    for a in updated_node.args]
            if function in LEVELS:
                args = [*args[:1], cst.Arg(cst.SimpleString(f'"{LEVELS[function]}"'))]
            method = "log" if function in LEVELS else function
            self.converted(original_node, f"storm.{function}() -> self.{method}()")
            return updated_node.with_changes(
                func=cst.Attribute(cst.Name("self"), cst.Name(method)), args=args)
        if function == "reportError":
            self.converted(original_node, "storm.reportError() -> self.logger.error()")
            return updated_node.with_changes(func=cst.Attribute(
                cst.Attribute(cst.Name("self"), cst.Name("logger")), cst.Name("error")))
        self.todo(original_node, f"storm.{function}() has no heronpy equivalent")
        return updated_node

    def leave_FunctionDef(self, original_node: cst.FunctionDef,
                          updated_node: cst.FunctionDef) -> cst.FunctionDef:
        if original_node.name.value == "nextTuple" and self.kind() in STORM_PY:
            self.converted(original_node, "nextTuple -> next_tuple")
            return updated_node.with_changes(name=cst.Name("next_tuple"))
        return updated_node

    def leave_Attribute(self, original_node: cst.Attribute,
                        updated_node: cst.Attribute) -> cst.Attribute:
        if (original_node.attr.value == "nextTuple" and self.kind() in STORM_PY
                and isinstance(original_node.value, cst.Name)
                and original_node.value.value == "self"):
            return updated_node.with_changes(attr=cst.Name("next_tuple"))
        return updated_node

    def leave_If(self, original_node: cst.If, updated_node: cst.If) -> cst.BaseStatement:
        """`if __name__ == "__main__": Component().run()` goes away."""
        test = original_node.test
        if not (isinstance(test, cst.Comparison) and dotted(test.left) == "__name__"
                and original_node.orelse is None):
            return updated_node
        statements = original_node.body.body
        if statements and all(self._runs_component(s) for s in statements):
            self.converted(original_node, "removed the script entry point: Heron starts "
                           "components itself")
            return cst.RemoveFromParent()
        return updated_node

    def _runs_component(self, statement: cst.BaseStatement) -> bool:
        if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
            return False
        expr = statement.body[0]
        call = expr.value if isinstance(expr, cst.Expr) else None
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
                and call.func.attr.value == "run" and isinstance(call.func.value, cst.Call)):
            return False
        name = dotted(call.func.value.func)
        info = self.module_info.classes.get(name or "")
        return info is not None and self.index.kind(info) in COMPONENTS
