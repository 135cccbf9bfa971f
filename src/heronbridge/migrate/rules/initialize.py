"""HB002: `initialize(config, context)`, and the attributes heronpy does not set.

pystorm calls `initialize` positionally, so its parameters may have any name; heronpy
calls it with the keywords `config=` and `context=`. A local the method already names
`config` (say, a ConfigParser) gives the parameter its name and takes one the module does
not use (`local_config`). pystorm also sets attributes on the
component that heronpy lacks (attributes.py lists them: `pid`, `task_id`,
`component_name`, `topology_name`, `debug`, `storm_conf`, `context`); migrated
components set those the tree reads to the values pystorm gave them, once, in the
`initialize` the hierarchy plan (hierarchy.py) picks: the first heronpy calls, or the one
it passes on to first thing. pystorm's `context` parameter was that same dict (Storm's
context), so the method's own uses of it read `self.context`; what it passes on to
another `initialize` (`super().initialize(conf, ctx)`, `Base.initialize(self, ...)`,
keywords or `*args, **kwargs`) stays heronpy's config and context, which every migrated
`initialize` expects.
"""

from __future__ import annotations

from typing import Any

import libcst as cst
from libcst.metadata import PositionProvider, ScopeProvider

from ..analysis import SPOUT, Index, ModuleInfo
from ..attributes import ATTRIBUTES, SET_NAMES, value
from ..hierarchy import LIB, PYSTORM_PARAMS, UNSEEN, Prelude, plan_of, spout_only
from ..rule import Rule, dotted, is_docstring

PARAMS = ("config", "context")
SELF_CONTEXT = "self.context"  # what pystorm's context parameter becomes
KEYWORDS_ONLY = ("heronpy calls initialize(config=..., context=...) with keywords; give it "
                 "the parameters (self, config, context)")


class InitializeRule(Rule):
    ID = "HB002"
    NAME = "initialize"
    DESCRIPTION = "initialize(config, context) and the component attributes pystorm set"
    METADATA_DEPENDENCIES = (PositionProvider, ScopeProvider)

    @classmethod
    def applies(cls, index: Index, module: ModuleInfo) -> bool:
        kinds = plan_of(index).kinds
        return any(c.qualified in kinds for c in module.classes.values())

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._renames: dict[cst.CSTNode, str] = {}  # a Name: its new name, or SELF_CONTEXT
        self._keywords: dict[cst.Arg, str] = {}  # a forward's keyword: its new name
        self._as_context: set[cst.Attribute] = set()  # `self.context` passed on as context
        self._forwards: set[cst.Call] = set()  # forwards given config and context first
        self._new_params: cst.Parameters | None = None
        self._context_used = False  # the initialize being visited reads its context

    # -- where we are ------------------------------------------------------------------

    def visit_Module(self, node: cst.Module) -> bool:
        self._taken = {n.value for n in _names(node)}  # no new local may take one of these
        return True

    def _key(self) -> str | None:
        info = self.component
        if info is None or len(self._classes) != 1:
            return None
        return info.qualified if plan_of(self.index).related(info.qualified) else None

    def _is_initialize(self, node: cst.FunctionDef) -> bool:
        return node.name.value == "initialize" and len(self._statements) == 2 and \
            self._key() is not None

    def _prelude(self) -> Prelude | None:
        key = self._key()
        return plan_of(self.index).preludes.get(key) if key is not None else None

    # -- the method's parameters and what it passes on ----------------------------------

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        if not self._is_initialize(node):
            return True
        params = node.params
        positional = [*params.posonly_params, *params.params]
        required_kwonly = [p for p in params.kwonly_params if p.default is None]
        star = params.star_arg if isinstance(params.star_arg, cst.Param) else None
        self._new_params = None
        self._context_used = False
        if len(positional) == 1 and star is not None and params.star_kwarg is not None \
                and not required_kwonly:
            self._pass_through(node, star.name.value, params.star_kwarg.name.value)
            return True
        if len(positional) != 3 or required_kwonly:
            self.refuse(node, KEYWORDS_ONLY)
            return True
        scope = self._scope(node)
        forwards = self._forward_args(node, [p.name.value for p in positional[1:]])
        for param, new in zip(positional[1:], PARAMS, strict=True):
            old = param.name.value
            references = self._references(scope, old)
            why = self._make_room(node, scope, new) if old != new and scope is not None \
                else None
            if why is not None:
                self.refuse(node, f"initialize's parameter {old!r} must be named {new!r}, "
                            f"and this method {why}")
                continue
            if old != new:
                self._renames[param.name] = new
            for reference in references:
                passed = forwards.get(reference)
                if passed is not None:
                    if passed != old:
                        self._renames[reference] = passed
                elif new == "context":  # pystorm's context parameter is self.context
                    self._context_used = True
                    self._renames[reference] = SELF_CONTEXT
                elif old != new:
                    self._renames[reference] = new
        return True

    def _make_room(self, node: cst.FunctionDef, scope, new: str) -> str | None:
        """Free the name `new` in the method for its parameter: the method's own local of
        that name is renamed to one the module does not use. None when the name is free
        now, else why it cannot be."""
        names = {n.value for n in _variables(node.body)}
        declared = [n for n in _names(node.body, (cst.Global, cst.Nonlocal)) if n.value == new]
        if declared:
            return f"declares {new!r} global or nonlocal"
        if new not in scope.assignments:
            if new in names:
                return f"reads a {new!r} from outside it, which the parameter would hide"
            return None
        assignments = list(scope.assignments[new])
        if not all(isinstance(a.node, cst.Name) and a.scope is scope for a in assignments):
            return f"imports or declares {new!r} itself"
        fresh = next(name for name in (f"local_{new}", *(f"local_{new}_{i}"
                                                         for i in range(2, 1000)))
                     if name not in self._taken)
        self._taken.add(fresh)
        for assignment in assignments:
            self._renames[assignment.node] = fresh
            for access in assignment.references:
                if isinstance(access.node, cst.Name):
                    self._renames[access.node] = fresh
        self.converted(node, f"initialize's local {new!r} -> {fresh!r} (its parameter "
                       f"takes the name heronpy calls it with)")
        return None

    def _scope(self, node: cst.FunctionDef):
        return self.get_metadata(ScopeProvider, node.body.body[0], None) \
            if node.body.body else None

    @staticmethod
    def _references(scope, name: str) -> list[cst.Name]:
        if scope is None:
            return []
        return [access.node for assignment in scope.assignments[name]
                for access in assignment.references if isinstance(access.node, cst.Name)]

    def _pass_through(self, node: cst.FunctionDef, args: str, kwargs: str) -> None:
        """`initialize(self, *args, **kwargs)`: heronpy's keywords pass through as they
        are, when the method only hands them on. Where the method must set pystorm's
        attributes it needs the context by name: `(self, config, context, *args,
        **kwargs)`, config and context handed on first."""
        scope = self._scope(node)
        forwards = self._forward_args(node, [])
        starred = {id(a.value) for call in forwards.get("calls", ()) for a in call.args
                   if a.star}
        for name in (args, kwargs):
            if any(id(r) not in starred for r in self._references(scope, name)):
                self.refuse(node, f"heronpy calls initialize(config=..., context=...) with "
                            f"keywords: *{args} gets nothing and **{kwargs} gets config and "
                            "context; give it the parameters (self, config, context)")
                return
        prelude = self._prelude()
        if prelude is None or prelude.added:
            return
        params = node.params
        self._new_params = params.with_changes(
            params=[*params.params, *(cst.Param(cst.Name(p)) for p in PARAMS)])
        self._forwards = set(forwards.get("calls", ()))

    def _forward_args(self, node: cst.FunctionDef, own: list[str]) -> dict:
        """What each forward in `node` passes: {Name node: the new name it must read}
        for the parameters passed on as config and context; keywords renamed and
        `self.context`/`self.storm_conf` passed on noted; other contexts marked. Under
        the key "calls", the forward calls."""
        rule = self
        found: dict = {"calls": []}

        class Forwards(cst.CSTVisitor):
            def visit_Call(self, call: cst.Call) -> bool:
                args = _forwarded(call)
                if args is not None:
                    found["calls"].append(call)
                    rule._map_forward(call, args, own, found)
                return True

        node.body.visit(Forwards())
        return found

    def _map_forward(self, call: cst.Call, args: list[cst.Arg], own: list[str],
                     found: dict) -> None:
        targets = plan_of(self.index).targets.get(self._key() or "", set())
        unseen = {t for t in targets if t.startswith(UNSEEN)}
        if unseen:
            if unseen != targets:
                self.todo(call, "passes initialize's arguments on to an unseen class's "
                          "initialize for some subclasses and a migrated one for others: "
                          "pass pystorm's self.storm_conf, self.context to the first and "
                          "config, context to the second")
            return  # pystorm-era code: it gets pystorm's conf and context, as before
        names = self._target_params()
        for i, arg in enumerate(args):
            if arg.star:
                continue
            if arg.keyword is not None:
                given = arg.keyword.value
                place = PARAMS.index(given) if given in PARAMS else names.get(given)
                if place is None:
                    self.todo(call, f"passes {given}= on to initialize, which the codemod "
                              "cannot match to heronpy's config or context; pass them as "
                              "config=config, context=context")
                    continue
                if given != PARAMS[place]:
                    self._keywords[arg] = PARAMS[place]
            else:
                place = i if i < len(PARAMS) else None
            if place is None:
                continue
            value_ = arg.value
            if isinstance(value_, cst.Name) and value_.value in own:
                found[value_] = PARAMS[own.index(value_.value)]  # heronpy's, by name
            elif place == 1 and dotted(value_) == SELF_CONTEXT:
                self._as_context.add(value_)
            elif place == 0 and dotted(value_) == "self.storm_conf":
                self._as_context.add(value_)
            elif place == 1:
                text = cst.Module([]).code_for_node(value_)
                self.todo(call, f"passes {text} on to initialize as its context: a migrated "
                          "initialize expects heronpy's context (pystorm's was a dict); "
                          "pass context on")

    def _target_params(self) -> dict[str, int]:
        """The parameter names the initialize(s) a forward reaches were written with,
        by position."""
        plan = plan_of(self.index)
        names: dict[str, int] = {}
        for target in plan.targets.get(self._key() or "", ()):
            written = PYSTORM_PARAMS if target.startswith(LIB) else plan.params.get(target)
            for place, name in enumerate((written or ())[:2]):
                names[name] = place
        return names

    # -- rewriting -------------------------------------------------------------------------

    def leave_Name(self, original_node: cst.Name,
                   updated_node: cst.Name) -> cst.BaseExpression:
        new = self._renames.get(original_node)
        if new is None:
            return updated_node
        if new == SELF_CONTEXT:  # a new node each time: no node sits twice in the tree
            return cst.Attribute(cst.Name("self"), cst.Name("context"),
                                 lpar=updated_node.lpar, rpar=updated_node.rpar)
        return updated_node.with_changes(value=new)

    def leave_Attribute(self, original_node: cst.Attribute,
                        updated_node: cst.Attribute) -> cst.BaseExpression:
        if original_node in self._as_context:
            name = "context" if original_node.attr.value == "context" else "config"
            return cst.Name(name, lpar=updated_node.lpar, rpar=updated_node.rpar)
        return updated_node

    def leave_Arg(self, original_node: cst.Arg, updated_node: cst.Arg) -> cst.Arg:
        new = self._keywords.get(original_node)
        return updated_node.with_changes(keyword=cst.Name(new)) if new else updated_node

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        if original_node not in self._forwards:
            return updated_node
        args = list(updated_node.args)
        at = next((i for i, a in enumerate(args) if a.star), len(args))
        given = [cst.Arg(cst.Name(p), comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(
            " "))) for p in PARAMS]
        return updated_node.with_changes(args=[*args[:at], *given, *args[at:]])

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
        if self._new_params is not None:
            updated_node = updated_node.with_changes(params=self._new_params)
            self.converted(original_node, "initialize(*args, **kwargs) takes config and "
                           "context by name and passes them on first")
        self._new_params, self._forwards = None, set()
        prelude = self._prelude()
        if prelude is None or prelude.added:
            return updated_node
        new = self._insert(original_node, list(updated_node.body.body), prelude)
        return updated_node.with_changes(body=updated_node.body.with_changes(body=new))

    def _insert(self, original: cst.CSTNode, body: list[cst.BaseStatement],
                prelude: Prelude) -> list[cst.BaseStatement]:
        at = 1 if body and is_docstring(body[0]) else 0
        present = {_text(s) for s in body}
        statements = [s for s in self._statements_for(prelude) if _text(s) not in present]
        if statements:
            self.converted(original, "sets the attributes pystorm set: " +
                           ", ".join(_text(s).splitlines()[-1].strip() for s in statements))
        return [*body[:at], *statements, *body[at:]]

    def _statements_for(self, prelude: Prelude) -> list[cst.BaseStatement]:
        """`self.<attribute> = <pystorm's value>` for each attribute, in pystorm's order,
        under the guard when the plan asks for one."""
        kind = SPOUT if spout_only(prelude.kinds) else None
        names = [n for n in SET_NAMES if n in prelude.names]
        for name in names:
            for module, symbol in ATTRIBUTES[name].imports:
                self.require(module, symbol)
        lines = [cst.parse_statement(f"self.{n} = {value(n, kind)}") for n in names]
        if not prelude.guarded or not lines:
            return lines
        owner = self.owner.name  # set only when heronpy called this initialize first
        return [cst.If(test=cst.parse_expression(
            f"type(self).initialize is {owner}.initialize"), body=cst.IndentedBlock(lines))]

    def leave_ClassDef(self, original_node: cst.ClassDef,
                       updated_node: cst.ClassDef) -> cst.ClassDef:
        key = self._key()
        if key is None:
            return updated_node
        for base in plan_of(self.index).unseen.get(key, ()):
            self.todo(original_node, f"{base} is not in this tree, so the codemod could not "
                      "migrate it: every pystorm attribute is set for it and its initialize "
                      "gets pystorm's conf and context (self.storm_conf, self.context); if "
                      "it uses more of pystorm's API, port it to heronpy")
        prelude = self._prelude()
        if prelude is None or not prelude.added:
            return updated_node
        body = self._statements_for(prelude)
        if prelude.calls_super:  # an unseen base's initialize is pystorm-era code
            body.append(cst.parse_statement(
                "super().initialize(self.storm_conf, self.context)"))
        method = cst.FunctionDef(
            name=cst.Name("initialize"),
            params=cst.Parameters([cst.Param(cst.Name(p)) for p in ("self", *PARAMS)]),
            body=cst.IndentedBlock(body),
            leading_lines=[cst.EmptyLine(indent=False)])
        statements = list(updated_node.body.body)
        at = next((i for i, s in enumerate(statements) if isinstance(s, cst.FunctionDef)),
                  len(statements))
        self.converted(original_node, "added initialize(config, context) to set the "
                       "attributes pystorm set" + (" and pass them on" if prelude.calls_super
                                                   else ""))
        return updated_node.with_changes(body=updated_node.body.with_changes(
            body=[*statements[:at], method, *statements[at:]]))


def _forwarded(call: cst.Call) -> list[cst.Arg] | None:
    """The arguments a call passes on to another initialize (for `Base.initialize(self,
    ...)` without self), or None if it is not such a call."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and func.attr.value == "initialize"):
        return None
    owner = func.value
    if isinstance(owner, cst.Call) and isinstance(owner.func, cst.Name) and \
            owner.func.value == "super":
        return list(call.args)
    first = call.args[0] if call.args else None
    if dotted(owner) and first is not None and not first.star and first.keyword is None \
            and isinstance(first.value, cst.Name) and first.value.value == "self":
        return list(call.args[1:])
    return None


def _names(node: cst.CSTNode, within: tuple[type, ...] = ()) -> list[cst.Name]:
    """Every Name under `node` (under a statement of the `within` kinds, when given)."""
    found: list[cst.Name] = []

    class Names(cst.CSTVisitor):
        def __init__(self) -> None:
            self.depth = 0

        def visit_Name(self, name: cst.Name) -> None:
            if not within or self.depth:
                found.append(name)

        def on_visit(self, visited: cst.CSTNode) -> bool:
            if within and isinstance(visited, within):
                self.depth += 1
            return super().on_visit(visited)

        def on_leave(self, original: cst.CSTNode) -> None:
            if within and isinstance(original, within):
                self.depth -= 1
            super().on_leave(original)

    node.visit(Names())
    return found


def _variables(node: cst.CSTNode) -> list[cst.Name]:
    """The Names under `node` that name a variable: not `x.attr`'s attr, not `f(kw=...)`'s
    keyword, which a parameter of that name would not hide."""
    skip: set[int] = set()

    class Skips(cst.CSTVisitor):
        def visit_Attribute(self, attribute: cst.Attribute) -> None:
            skip.add(id(attribute.attr))

        def visit_Arg(self, arg: cst.Arg) -> None:
            if arg.keyword is not None:
                skip.add(id(arg.keyword))

    node.visit(Skips())
    return [name for name in _names(node) if id(name) not in skip]


def _text(statement: cst.BaseStatement) -> str:
    return cst.Module([]).code_for_node(statement).strip()
