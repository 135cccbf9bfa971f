"""HB007: component specs as heronpy reads them.

streamparse's `spec()` falls back to the class's `par` and `config` attributes; heronpy's
ignores them, so they move into the call. heronpy takes inputs as a dict or a list, not
a single spec, and one number as `par` (a `par` given per environment becomes one of its
numbers, marked). heronpy runs Python components only: a shell or Java spec stays as
written, declared through heronbridge's ShellBolt & co (HB009), marked, and the topology
refuses to run (`@unported`) while the module still imports; so does a component built on
heronbridge's Kafka spout or bolt (streamparse's API only). A spout given inputs, and
a topology importing `src.X` (Storm's jar layout has no `src` package), are marked.
"""

from __future__ import annotations

import ast

import libcst as cst

from ..analysis import TOPOLOGY, ClassInfo, Index, ModuleInfo, is_library, library_symbol
from ..rule import HELPERS, NO_SPACES, Rule, dotted

# streamparse: Bolt.spec(name, inputs, par, config); Spout.spec(name, par, config).
# heronbridge's own components written on streamparse's API, with no heronpy counterpart.
STREAMPARSE_ONLY = ("heronbridge.kafka.",)
POSITIONS = {"bolt": ("name", "inputs", "par", "config"), "spout": ("name", "par", "config")}


class SpecsRule(Rule):
    ID = "HB007"
    NAME = "specs"
    DESCRIPTION = "component par and config moved into spec(); inputs as a list or dict"

    @classmethod
    def applies(cls, index: Index, module: ModuleInfo) -> bool:
        return TOPOLOGY in index.kinds_in(module)

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        func = original_node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "spec"
                and self.kind() == TOPOLOGY):
            return updated_node
        owner = dotted(func.value)
        if owner is None:
            return updated_node
        qualified = self.module_info.resolve(owner)
        if is_library(qualified) and library_symbol(qualified) is None:
            symbol = qualified.rsplit(".", 1)[-1]
            self.refuse(original_node, f"heronpy runs Python components only: this "
                        f"{symbol} is declared, and the topology refuses to run until it "
                        f"is ported to a Python {'Spout' if 'Spout' in symbol else 'Bolt'}")
            return updated_node
        info = self.index.find_class(qualified, self.module_info.path)
        if info is None:
            return updated_node
        foreign = self._streamparse_only(info)
        if foreign is not None:
            self.refuse(original_node, f"{info.name} derives from {foreign}, which runs on "
                        f"streamparse's API only: keep this topology on streamparse "
                        f"(heronbridge runs it unchanged), or port {info.name} to a heronpy "
                        f"{'Spout' if 'Spout' in foreign else 'Bolt'}")
            # Its own spec() is streamparse's, which heronpy's specs break: declared through
            # a stand-in instead, so that the module imports and the topology refuses.
            stand_in = "UnportedSpout" if "Spout" in foreign else "UnportedBolt"
            self.require(HELPERS, stand_in)
            args = list(updated_node.args)
            if not any(a.keyword and a.keyword.value == "outputs" for a in args):
                # heronpy wants a spout's outputs declared: the class's own.
                args = _with_keyword(args, "outputs", cst.parse_expression(f"{owner}.outputs"))
            return updated_node.with_changes(
                func=cst.Attribute(cst.Name(stand_in), cst.Name("spec")), args=args)
        kind = self.index.kind(info) or ""
        names = POSITIONS["spout" if "Spout" in kind else "bolt"]
        given = {names[i]: a for i, a in enumerate(original_node.args)
                 if a.keyword is None and i < len(names)}
        given.update({a.keyword.value: a for a in original_node.args if a.keyword})
        args = list(updated_node.args)
        for attribute in ("par", "config"):
            if attribute in given:
                value = given[attribute].value
                if attribute == "par" and isinstance(value, cst.Dict):
                    at = original_node.args.index(given[attribute])
                    args[at] = args[at].with_changes(value=self._one_par(original_node,
                                                                         value))
                continue
            source = next((a.attributes[attribute] for a in self.index.lineage(info)
                           if attribute in a.attributes), None)
            if source is None:
                continue
            try:
                value = ast.literal_eval(source)
            except (ValueError, SyntaxError):
                self.todo(original_node, f"{info.name}.{attribute} is not a literal; pass "
                          f"{attribute}= to spec(): heronpy ignores the class attribute")
                continue
            new = cst.parse_expression(source)
            if attribute == "par" and isinstance(new, cst.Dict):
                new = self._one_par(original_node, new)
            args = _with_keyword(args, attribute, new)
            self.converted(original_node, f"{info.name}.{attribute} moved into spec()")
        inputs = given.get("inputs")
        if inputs is not None and "Spout" in kind:
            self.todo(original_node, "a spout has no inputs: streamparse's Spout.spec() "
                      "takes none either (it raises TypeError); remove inputs=")
        elif inputs is not None and isinstance(inputs.value, (cst.Name, cst.Subscript)):
            index = [i for i, a in enumerate(original_node.args) if a is inputs][0]
            args[index] = args[index].with_changes(
                value=cst.List([cst.Element(args[index].value)]))
            self.converted(original_node, "single input spec wrapped in a list")
        return updated_node.with_changes(args=args)

    def _streamparse_only(self, info: ClassInfo) -> str | None:
        """The base, from outside the tree, that makes `info` a streamparse component
        heronpy cannot host (heronbridge's Kafka spout and bolt), if any."""
        for ancestor in self.index.lineage(info):
            for base in ancestor.bases:
                if base.startswith(STREAMPARSE_ONLY):
                    return base
        return None

    def leave_ImportFrom(self, original_node: cst.ImportFrom,
                         updated_node: cst.ImportFrom) -> cst.ImportFrom:
        module = dotted(original_node.module) if original_node.module else None
        if not original_node.relative and module and module.split(".")[0] == "src":
            self._src_import(original_node, module)
        return updated_node

    def leave_Import(self, original_node: cst.Import, updated_node: cst.Import) -> cst.Import:
        for alias in original_node.names:
            name = dotted(alias.name) or ""
            if name.split(".")[0] == "src":
                self._src_import(original_node, name)
        return updated_node

    def _src_import(self, node: cst.CSTNode, module: str) -> None:
        inside = module.removeprefix("src").lstrip(".") or "its modules"
        self.todo(node, f"imports {module}: a topology's components are found with src/ "
                  f"itself on the path (Storm's jar puts src/'s contents at its root), so "
                  f"import {inside}")

    def _one_par(self, call: cst.Call, given: cst.Dict) -> cst.BaseExpression:
        """heronpy asserts `par` is an int when the Topology class is created."""
        choice = _par_choice(given)
        text = " ".join(cst.Module([]).code_for_node(given).split())
        if choice is None:
            self.todo(call, f"par given per environment ({text}): heronpy takes one number")
            return given
        self.todo(call, f"par given per environment ({text}): heronpy takes one number; "
                  f"this is the {choice[0]} environment's; change it for another")
        return choice[1]


def _par_choice(given: cst.Dict) -> tuple[str, cst.BaseExpression] | None:
    """The environment whose parallelism a per-environment `par` keeps: prod's, else
    the first's."""
    choices = [(e.key.evaluated_value, e.value) for e in given.elements
               if isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString)]
    return next((c for c in choices if c[0] == "prod"), choices[0] if choices else None)


def _with_keyword(args: list[cst.Arg], name: str, value: cst.BaseExpression) -> list[cst.Arg]:
    """`args` and `name=value` after them, in the layout of the call's last argument."""
    comma = args[-1].comma if args else cst.MaybeSentinel.DEFAULT
    return [*args, cst.Arg(value=value, keyword=cst.Name(name), comma=comma,
                           equal=NO_SPACES)]
