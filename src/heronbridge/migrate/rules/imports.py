"""HB009: imports of streamparse, pystorm and storm.py become heronpy's (last: the rules
before it find components through these imports).

Each import line is replaced in place by one line per heronpy module, so comments above
and beside it stay where they were. `import streamparse as sp` with `sp.Bolt` becomes
`from heronpy.api.bolt.bolt import Bolt` with `Bolt`. What heronpy lacks comes from
heronbridge's base classes for migrated code (shell and Java components are declared
through heronbridge's ShellBolt & co, which refuse to run: HB007 marks their specs); what
neither has keeps its import, marked.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from ..analysis import LIBRARIES, Index, ModuleInfo, is_library
from ..homes import EXTRAS, HELPERS
from ..rule import Rule, dotted, manual, marker

HERONPY = {
    "Bolt": ("heronpy.api.bolt.bolt", "Bolt"),
    "Spout": ("heronpy.api.spout.spout", "Spout"),
    "Topology": ("heronpy.api.topology", "Topology"),
    "Grouping": ("heronpy.api.stream", "Grouping"),
    "Stream": ("heronpy.api.stream", "Stream"),
    "GlobalStreamId": ("heronpy.api.component.component_spec", "GlobalStreamId"),
    "Tuple": ("heronpy.api.tuple", "HeronTuple"),
}
for _name in ("BatchingBolt", "TicklessBatchingBolt", "ReliableSpout"):
    HERONPY[_name] = (EXTRAS, _name)
for _name in ("ShellBolt", "ShellSpout", "JavaBolt", "JavaSpout"):  # declared, never run
    HERONPY[_name] = (HELPERS, _name)
STORM_PY = {"BasicBolt": HERONPY["Bolt"], "Bolt": HERONPY["Bolt"],
            "Spout": HERONPY["Spout"], "Tuple": HERONPY["Tuple"]}
def _target(qualified: str) -> tuple[str, str] | None:
    """Where heronpy (or heronbridge) has what `qualified` names."""
    parts = qualified.split(".")
    if parts[0] == "storm":
        return STORM_PY.get(parts[1]) if len(parts) == 2 else None
    if parts[0] in LIBRARIES:
        return HERONPY.get(parts[-1])
    return None


class ImportsRule(Rule):
    ID = "HB009"
    NAME = "imports"
    DESCRIPTION = "streamparse, pystorm and storm.py imports as heronpy's"

    @classmethod
    def applies(cls, index: Index, module: ModuleInfo) -> bool:
        return module.uses_library

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._modules: dict[str, str] = {}  # names bound by `import <library> [as x]`
        self._needed: dict[str, list[tuple[str, str]]] = {}  # such a name -> imports

    def visit_Module(self, node: cst.Module) -> bool:
        for statement in node.body:
            if not isinstance(statement, cst.SimpleStatementLine):
                continue
            for item in statement.body:
                if not isinstance(item, cst.Import):
                    continue
                for alias in item.names:
                    name = dotted(alias.name) or ""
                    if is_library(name):
                        head = alias.asname.name.value if alias.asname else name.split(".")[0]
                        self._modules[head] = name if alias.asname else head
        return True

    def visit_Import(self, node: cst.Import) -> bool:
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    def leave_Attribute(self, original_node: cst.Attribute,
                        updated_node: cst.Attribute) -> cst.BaseExpression:
        name = dotted(original_node)
        if name is None or name.split(".")[0] not in self._modules:
            return updated_node
        head = name.split(".")[0]
        target = _target(f"{self._modules[head]}.{name.partition('.')[2]}")
        if target is None:
            return updated_node
        needed = self._needed.setdefault(head, [])
        if target not in needed:
            needed.append(target)
        self.converted(original_node, f"{name} -> {target[1]} from {target[0]}")
        return cst.Name(target[1])

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        used = _heads(updated_node)
        body: list[cst.BaseStatement] = []
        carry: list[cst.EmptyLine] = []  # comments of a line that went
        for statement in updated_node.body:
            replacement = self._replace(statement, used)
            if replacement is None:
                body.append(statement.with_changes(
                    leading_lines=[*carry, *statement.leading_lines]) if carry else statement)
                carry = []
            elif not replacement:
                carry = [*carry, *statement.leading_lines]
            else:
                replacement[0] = replacement[0].with_changes(
                    leading_lines=[*carry, *statement.leading_lines,
                                   *replacement[0].leading_lines])
                replacement[-1] = replacement[-1].with_changes(
                    trailing_whitespace=statement.trailing_whitespace)
                body.extend(replacement)
                carry = []
        return updated_node.with_changes(body=body,
                                         footer=[*carry, *updated_node.footer])

    def _replace(self, statement: cst.BaseStatement,
                 used: set[str]) -> list[cst.SimpleStatementLine] | None:
        """The lines that replace an import line of the libraries; None for other lines."""
        if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
            return None
        node = statement.body[0]
        if isinstance(node, cst.ImportFrom) and not node.relative and node.module and \
                is_library(dotted(node.module) or "") and \
                not isinstance(node.names, cst.ImportStar):
            return self._from_import(node, statement)
        if isinstance(node, cst.Import) and any(is_library(dotted(a.name) or "")
                                                for a in node.names):
            return self._import(node, used)
        return None

    def _from_import(self, node: cst.ImportFrom,
                     statement: cst.SimpleStatementLine) -> list[cst.SimpleStatementLine]:
        module = dotted(node.module) or ""
        grouped: dict[str, list[cst.ImportAlias]] = {}
        kept: list[cst.ImportAlias] = []
        for alias in node.names:
            name = dotted(alias.name) or ""
            target = _target(f"{module}.{name}")
            if target is None:
                kept.append(alias)
                continue
            local = alias.asname.name.value if alias.asname else name
            grouped.setdefault(target[0], []).append(cst.ImportAlias(
                cst.Name(target[1]),
                asname=None if local == target[1] else cst.AsName(cst.Name(local))))
            self.converted(alias, f"{module}.{name} -> {target[0]}.{target[1]}")
        lines = [_from_line(m, aliases) for m, aliases in grouped.items()]
        if kept:
            reason = "heronpy has no " + ", ".join(dotted(a.name) or "" for a in kept)
            self.todo(node, reason)
            comment = marker(self.ID, reason)
            line = _from_line(module, kept)
            if comment not in {e.comment.value for e in statement.leading_lines
                                         if e.comment}:
                line = line.with_changes(leading_lines=[
                    cst.EmptyLine(comment=cst.Comment(c))
                    for c in (comment, manual(self.ID, self.NAME))])
            lines.append(line)
        return lines

    def _import(self, node: cst.Import, used: set[str]) -> list[cst.SimpleStatementLine]:
        lines: list[cst.SimpleStatementLine] = []
        kept: list[cst.ImportAlias] = []
        for alias in node.names:
            name = dotted(alias.name) or ""
            head = alias.asname.name.value if alias.asname else name.split(".")[0]
            if not is_library(name) or head in used:
                kept.append(alias)
            for module, symbol in self._needed.get(head, []):
                lines.append(_from_line(module, [cst.ImportAlias(cst.Name(symbol))]))
        if kept:
            names = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in kept]
            names = [a.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
                     if i < len(names) - 1 else a for i, a in enumerate(names)]
            lines.append(cst.SimpleStatementLine([node.with_changes(names=names)]))
        return lines


def _heads(module: cst.Module) -> set[str]:
    """Names used as the head of an attribute chain, outside import lines."""
    heads: set[str] = set()

    class Heads(cst.CSTVisitor):
        def visit_Import(self, node: cst.Import) -> bool:
            return False

        def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
            return False

        def visit_Attribute(self, node: cst.Attribute) -> bool:
            name = dotted(node)
            if name:
                heads.add(name.split(".")[0])
            return True

    module.visit(Heads())
    return heads


def _from_line(module: str, aliases: list[cst.ImportAlias]) -> cst.SimpleStatementLine:
    names = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in aliases]
    names = [a.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
             if i < len(names) - 1 else a for i, a in enumerate(names)]
    return cst.SimpleStatementLine([cst.ImportFrom(
        module=cst.parse_expression(module), names=names)])

