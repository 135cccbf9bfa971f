"""HB002: `initialize(config, context)`, and the attributes heronpy does not set.

pystorm calls `initialize` positionally, so its parameters may have any name; heronpy
calls it with the keywords `config=` and `context=`. pystorm also sets attributes on the
component that heronpy lacks (attributes.py lists them: `pid`, `task_id`,
`component_name`, `topology_name`, `debug`, `storm_conf`, `context`); migrated
components set those the tree reads, at the top of `initialize`, to the values pystorm
gave them. pystorm's `context` parameter was that same dict (Storm's context), so the
method's own uses of it read `self.context`.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import PositionProvider, ScopeProvider

from ..analysis import COMPONENTS, STORM_PY, Index, ModuleInfo
from ..attributes import ATTRIBUTES, SET_NAMES, value
from ..rule import Rule, is_docstring

PARAMS = ("config", "context")
SELF_CONTEXT = "self.context"  # what pystorm's context parameter becomes


class InitializeRule(Rule):
    ID = "HB002"
    NAME = "initialize"
    DESCRIPTION = "initialize(config, context) and the component attributes pystorm set"
    METADATA_DEPENDENCIES = (PositionProvider, ScopeProvider)

    @classmethod
    def applies(cls, index: Index, module: ModuleInfo) -> bool:
        return bool(index.kinds_in(module) & COMPONENTS)

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self._renames: dict[cst.Name, str] = {}  # a name, or SELF_CONTEXT
        self._context_used = False  # the initialize being visited reads its context

    def _prologue(self, context_used: bool = False) -> list[cst.BaseStatement]:
        """`self.<attribute> = <pystorm's value>` for those the tree reads."""
        kind = self.kind()
        pystorm = kind not in STORM_PY  # storm.py set none of them, but passed the context
        wanted = [n for n in SET_NAMES if (pystorm and n in self.index.attributes_read)
                  or (n == "context" and context_used)]
        for name in wanted:
            for module, symbol in ATTRIBUTES[name].imports:
                self.require(module, symbol)
        return [cst.parse_statement(f"self.{n} = {value(n, kind)}") for n in wanted]

    def _is_initialize(self, node: cst.FunctionDef) -> bool:
        return (node.name.value == "initialize" and len(self._classes) == 1
                and self.kind() in COMPONENTS)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        if not self._is_initialize(node):
            return True
        params = node.params
        positional = [*params.posonly_params, *params.params]
        if len(positional) != 3 or params.star_arg not in (None, cst.MaybeSentinel.DEFAULT) \
                or params.kwonly_params or params.star_kwarg is not None:
            self.todo(node, "heronpy calls initialize(config=..., context=...) with "
                      "keywords; give it exactly the parameters (self, config, context)")
            return True
        scope = self.get_metadata(ScopeProvider, node.body.body[0], None) if node.body.body \
            else None
        self._context_used = False
        for param, new in zip(positional[1:], PARAMS, strict=True):
            old = param.name.value
            # pystorm's context parameter is self.context (Storm's context as a dict)
            uses = SELF_CONTEXT if new == "context" else new
            references = [access.node for assignment in
                          (scope.assignments[old] if scope is not None else ())
                          for access in assignment.references
                          if isinstance(access.node, cst.Name)]
            if old != new and scope is not None and new in scope.assignments:
                self.todo(node, f"initialize's parameter {old!r} must be named {new!r}, "
                          f"which this method already uses for something else")
                continue
            if old != new:
                self._renames[param.name] = new
            for reference in references:
                if uses == SELF_CONTEXT:
                    self._context_used = True
                if old != new or uses == SELF_CONTEXT:
                    self._renames[reference] = uses
        return True

    def leave_Name(self, original_node: cst.Name,
                   updated_node: cst.Name) -> cst.BaseExpression:
        new = self._renames.get(original_node)
        if new is None:
            return updated_node
        if new == SELF_CONTEXT:  # a new node each time: no node sits twice in the tree
            return cst.Attribute(cst.Name("self"), cst.Name("context"),
                                 lpar=updated_node.lpar, rpar=updated_node.rpar)
        return updated_node.with_changes(value=new)

    def leave_FunctionDef(self, original_node: cst.FunctionDef,
                          updated_node: cst.FunctionDef) -> cst.FunctionDef:
        if not self._is_initialize(original_node):
            return updated_node
        renamed = [p.name.value for p in original_node.params.params[1:]
                   if p.name in self._renames]
        if renamed:
            self.converted(original_node, f"initialize parameters {renamed} -> "
                           f"{list(PARAMS)}")
        if self._context_used:
            self.converted(original_node, "initialize's context parameter -> self.context "
                           "(pystorm's context, a dict)")
        prologue = self._prologue(self._context_used)
        self._context_used = False
        if not prologue:
            return updated_node
        body = list(updated_node.body.body)
        at = 1 if body and is_docstring(body[0]) else 0
        present = {_text(s) for s in body}
        new = [s for s in prologue if _text(s) not in present]
        if new:
            self.converted(original_node, "sets the attributes pystorm set: " +
                           ", ".join(_text(s) for s in new))
        return updated_node.with_changes(body=updated_node.body.with_changes(
            body=[*body[:at], *new, *body[at:]]))

    def leave_ClassDef(self, original_node: cst.ClassDef,
                       updated_node: cst.ClassDef) -> cst.ClassDef:
        """A component deriving straight from the library without an initialize gets
        one, when the tree reads attributes pystorm set."""
        info = self.component
        if len(self._classes) != 1 or info is None or self.kind() not in COMPONENTS:
            return updated_node
        if self.index.has_method(info, "initialize"):
            return updated_node
        if any(self.index.find_class(b, self.module_info.path) for b in info.bases):
            return updated_node  # its project base class gets the initialize
        prologue = self._prologue()
        if not prologue:
            return updated_node
        method = cst.FunctionDef(
            name=cst.Name("initialize"),
            params=cst.Parameters([cst.Param(cst.Name(p)) for p in ("self", *PARAMS)]),
            body=cst.IndentedBlock(prologue),
            leading_lines=[cst.EmptyLine(indent=False)])
        body = list(updated_node.body.body)
        at = next((i for i, s in enumerate(body) if isinstance(s, cst.FunctionDef)),
                  len(body))
        self.converted(original_node, "added initialize(config, context) to set the "
                       "attributes pystorm set")
        return updated_node.with_changes(body=updated_node.body.with_changes(
            body=[*body[:at], method, *body[at:]]))


def _text(statement: cst.BaseStatement) -> str:
    return cst.Module([]).code_for_node(statement).strip()
