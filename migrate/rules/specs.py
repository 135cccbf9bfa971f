"""HB007: component specs as heronpy reads them.

streamparse's `spec()` falls back to the class's `par` and `config` attributes; heronpy's
ignores them, so they move into the call. heronpy takes inputs as a dict or a list, not
a single spec. It runs Python components only: shell and Java specs get a marker, as
does a `par` given per environment.
"""

from __future__ import annotations

import ast

import libcst as cst

from ..analysis import TOPOLOGY, Index, ModuleInfo, is_library, library_symbol
from ..rule import NO_SPACES, Rule, dotted

# streamparse: Bolt.spec(name, inputs, par, config); Spout.spec(name, par, config).
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
            self.todo(original_node, f"heronpy runs Python components only: port this "
                      f"{symbol} to a Python Bolt or Spout")
            return updated_node
        info = self.index.find_class(qualified, self.module_info.path)
        if info is None:
            return updated_node
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
                    self.todo(original_node, "par given per environment: heronpy takes one "
                              "number; pick the environment's")
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
            if attribute == "par" and isinstance(value, dict):
                self.todo(original_node, "par given per environment: heronpy takes one "
                          "number; pick the environment's")
                continue
            args = _with_keyword(args, attribute, cst.parse_expression(source))
            self.converted(original_node, f"{info.name}.{attribute} moved into spec()")
        inputs = given.get("inputs")
        if inputs is not None and isinstance(inputs.value, (cst.Name, cst.Subscript)):
            index = [i for i, a in enumerate(original_node.args) if a is inputs][0]
            args[index] = args[index].with_changes(
                value=cst.List([cst.Element(args[index].value)]))
            self.converted(original_node, "single input spec wrapped in a list")
        return updated_node.with_changes(args=args)


def _with_keyword(args: list[cst.Arg], name: str, value: cst.BaseExpression) -> list[cst.Arg]:
    """`args` and `name=value` after them, in the layout of the call's last argument."""
    comma = args[-1].comma if args else cst.MaybeSentinel.DEFAULT
    return [*args, cst.Arg(value=value, keyword=cst.Name(name), comma=comma,
                           equal=NO_SPACES)]
