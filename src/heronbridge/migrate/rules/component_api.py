"""HB005: the parts of pystorm's component API heronpy has differently or not at all.

`emit(stream=None)` means the default stream to pystorm and breaks heronpy's schema
check, so it goes. What has no heronpy counterpart gets a marker: task ids returned by
emit (heronpy returns them for direct and custom groupings only), direct emits, every
use of a pystorm attribute that attributes.py calls MARKED (`self.serializer`,
`raise_exception`, `report_metric`, protocol methods, pystorm's internals; defined or
assigned in the class body too), and an `__init__` heronpy cannot call (heronpy
constructs components as `Component(delegate=...)`).
"""

from __future__ import annotations

import libcst as cst

from ..analysis import AUTO_FLAGS, COMPONENTS, Index, ModuleInfo
from ..attributes import ATTRIBUTES
from ..rule import Rule, drop_arg, is_self_call, keyword


class ComponentApiRule(Rule):
    ID = "HB005"
    NAME = "component-api"
    DESCRIPTION = "emit arguments and the pystorm component API heronpy lacks"

    @classmethod
    def applies(cls, index: Index, module: ModuleInfo) -> bool:
        kinds = index.hierarchy.kinds
        return any(c.qualified in kinds for c in module.classes.values())

    def _in_component(self) -> bool:
        """In a component, or a class of the tree components derive from (a mixin)."""
        return bool(self.kinds() & COMPONENTS)

    def _marked(self, name: str) -> str | None:
        """The reason to mark a use of `name` in this component (or mixin), if pystorm's
        `name` has no heronpy equivalent in a component using it."""
        attribute = ATTRIBUTES.get(name)
        return attribute.detail if attribute is not None and \
            any(attribute.marked(kind) for kind in self.kinds()) else None

    def leave_Attribute(self, original_node: cst.Attribute,
                        updated_node: cst.Attribute) -> cst.Attribute:
        """`self.<name>` or `super().<name>`, read or written, anywhere in a component."""
        owner = original_node.value
        if (isinstance(owner, cst.Name) and owner.value == "self") or (
                isinstance(owner, cst.Call) and isinstance(owner.func, cst.Name)
                and owner.func.value == "super"):
            reason = self._marked(original_node.attr.value)
            if reason is not None:
                self.todo(original_node, f"self.{original_node.attr.value}: {reason}")
        return updated_node

    def leave_Assign(self, original_node: cst.Assign, updated_node: cst.Assign) -> cst.Assign:
        """A class-body assignment of a pystorm attribute (`exit_on_exception = False`);
        auto_ack & co are HB003's."""
        if len(self._classes) == 1 and len(self._statements) == 2:
            for target in original_node.targets:
                name = target.target.value if isinstance(target.target, cst.Name) else None
                reason = self._marked(name) if name and name not in AUTO_FLAGS else None
                if reason is not None:
                    self.todo(original_node, f"{name}: {reason}")
        return updated_node

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        if not self._in_component():
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
            at = next(i for i, a in enumerate(original_node.args) if a is stream)
            return updated_node.with_changes(args=drop_arg(updated_node.args, at))
        return updated_node

    def _statement_reads_result(self, call: cst.Call) -> bool:
        statement = self._statements[-1] if self._statements else None
        if not isinstance(statement, cst.SimpleStatementLine):
            return True
        return not any(isinstance(s, cst.Expr) and s.value is call for s in statement.body)

    def leave_FunctionDef(self, original_node: cst.FunctionDef,
                          updated_node: cst.FunctionDef) -> cst.FunctionDef:
        if len(self._classes) != 1 or not self._in_component() or \
                len(self._statements) != 2:  # a method of the component, not a nested def
            return updated_node
        name = original_node.name.value
        if name == "__init__" and not _passes_delegate(original_node):
            self.todo(original_node, "heronpy constructs components as Component(delegate="
                      "...); move this set-up into initialize(), or take **kwargs and "
                      "pass them to super().__init__")
        reason = self._marked(name)
        if reason is not None:
            self.todo(original_node, f"{name}() overrides pystorm's: {reason}")
        return updated_node


def _passes_delegate(init: cst.FunctionDef) -> bool:
    """`def __init__(self, *args, **kwargs)` that calls `super().__init__(*args, **kwargs)`
    (or with `delegate` by name): heronpy's `Component(delegate=...)` gets through."""
    params = init.params
    star_kwargs = params.star_kwarg.name.value if params.star_kwarg else None
    takes = {p.name.value for p in [*params.params, *params.kwonly_params]}
    if star_kwargs is None and "delegate" not in takes:
        return False
    found = False

    class Calls(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> bool:
            nonlocal found
            func = node.func
            if isinstance(func, cst.Attribute) and func.attr.value == "__init__" and \
                    isinstance(func.value, cst.Call) and \
                    isinstance(func.value.func, cst.Name) and func.value.func.value == "super":
                found = found or any(
                    (a.star == "**" and isinstance(a.value, cst.Name)
                     and a.value.value == star_kwargs)
                    or (a.keyword is not None and a.keyword.value == "delegate")
                    or (a.star == "" and isinstance(a.value, cst.Name)
                        and a.value.value == "delegate") for a in node.args)
            return True

    init.body.visit(Calls())
    return found


def _is_false(value: cst.BaseExpression) -> bool:
    return isinstance(value, cst.Name) and value.value == "False"
