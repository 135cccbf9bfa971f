"""What every rule shares: the tree's index, the report, and TODO markers.

A rule that cannot rewrite something says so three ways: a `# TODO(heronbridge:RULE):`
comment above the statement (added once: a re-run finds it and adds nothing), a warning,
and a report entry.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from . import MigrateError
from .analysis import ClassInfo, Index, ModuleInfo
from .hierarchy import plan_of
from .homes import HELPERS

MARKER = "# TODO(heronbridge:{rule}): {reason}"
# Below a rule's markers, where its docs section says what to do by hand (migrate/manual.py).
MANUAL = "# See heronbridge's docs/reference/codemod.md#{anchor} for what to do by hand."
UNPORTED = "unported"  # its class decorator: the class refuses to run, with these reasons
Import = tuple[str, str | None]  # (module, name): `from module import name`, or `import module`
CONVERTED = "converted"
NO_SPACES = cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))  # f(a=1)
TODO = "todo"


@dataclass
class Entry:
    path: str
    line: int
    rule: str
    status: str  # CONVERTED or TODO
    message: str
    refuses: str = ""  # a TODO whose class now refuses to run (@unported): its name

    def as_dict(self) -> dict[str, Any]:
        entry = {"path": self.path, "line": self.line, "rule": self.rule,
                 "status": self.status, "message": self.message}
        return {**entry, "refuses": self.refuses} if self.refuses else entry


def marker(rule: str, reason: str) -> str:
    return MARKER.format(rule=rule, reason=reason)


def manual(rule: str, name: str) -> str:
    """The line under a rule's markers: its docs section (heading "HBnnn name")."""
    return MANUAL.format(anchor=f"{rule.lower()}-{name}")


class Rule(cst.CSTTransformer):
    """A rule: one libcst transform over one module, reading the index.

    Plain transformers (no matcher decorators: their per-node dispatch cost more than
    the rules themselves), run only on modules `applies` accepts.
    """

    ID: ClassVar[str]
    NAME: ClassVar[str]
    DESCRIPTION: ClassVar[str]
    METADATA_DEPENDENCIES: ClassVar[tuple[Any, ...]] = (PositionProvider,)

    @classmethod
    def applies(cls, index: Index, module: ModuleInfo) -> bool:
        """Whether this module has anything the rule rewrites (a cheap look at the index)."""
        return True

    @classmethod
    def run(cls, tree: cst.Module, index: Index, module: ModuleInfo, entries: list[Entry],
            warnings: list[str], imports: set[Import] | None = None) -> cst.Module:
        """The rewritten tree; `imports` gathers what the new code needs imported."""
        # The tree is this run's own: no copy is needed for the metadata.
        rule = cls(index, module, entries, warnings, imports)
        return MetadataWrapper(tree, unsafe_skip_copy=True).visit(rule)

    def __init__(self, index: Index, module: ModuleInfo, entries: list[Entry],
                 warnings: list[str], imports: set[Import] | None = None) -> None:
        super().__init__()
        self.warnings = warnings
        self.index = index
        self.module_info = module
        self.entries = entries
        self.imports = set() if imports is None else imports
        self._statements: list[cst.CSTNode] = []
        self._markers: dict[int, list[str]] = {}  # id(original statement) -> comments
        self._classes: list[ClassInfo | None] = []
        self._refusals: list[str] = []  # reasons the top-level class being visited refuses

    # -- helpers for rules ------------------------------------------------------------

    @property
    def component(self) -> ClassInfo | None:
        """The top-level class being visited, if the index knows it."""
        return self._classes[0] if self._classes else None

    @property
    def owner(self) -> ClassInfo:
        """The component class being visited, where the rule acts only inside one."""
        info = self.component
        if info is None:
            msg = f"{self.module_info.path}: rule {self.ID} acted outside a component class"
            raise MigrateError(msg)
        return info

    def kind(self) -> str | None:
        info = self.component
        return self.index.kind(info) if info is not None else None

    def kinds(self) -> set[str | None]:
        """The kinds of the components the top-level class is part of: its own, its
        subclasses', or (a mixin) those of the components deriving from it."""
        info = self.component
        if info is None:
            return set()
        return plan_of(self.index).kinds.get(info.qualified, set())

    def line(self, node: cst.CSTNode) -> int:
        try:
            return self.get_metadata(PositionProvider, node).start.line
        except KeyError:
            return 0

    def converted(self, node: cst.CSTNode, message: str) -> None:
        self.entries.append(Entry(self.module_info.path, self.line(node), self.ID, CONVERTED,
                                  message))

    def todo(self, node: cst.CSTNode, reason: str) -> None:
        """Mark the statement holding `node` (an original node) for a manual change."""
        line = self.line(node)
        self.entries.append(Entry(self.module_info.path, line, self.ID, TODO, reason))
        self.warnings.append(f"{self.module_info.path}:{line}: {self.ID}: {reason}")
        if self._statements:
            key = id(self._statements[-1])
            comments = self._markers.setdefault(key, [])
            comment, link = marker(self.ID, reason), manual(self.ID, self.NAME)
            if comment not in comments:
                comments.append(comment)
            if link in comments:  # the link goes under the rule's last marker
                comments.remove(link)
            comments.append(link)

    def refuse(self, node: cst.CSTNode, reason: str) -> None:
        """Mark the statement holding `node`, which the rule rewrote to the nearest
        declaration heronpy accepts, and make the top-level class holding it refuse to
        run: `@unported(<the marker's text>)`, so that a topology using it fails to load
        with that text while the module still imports."""
        self.todo(node, reason)
        if not self._classes:
            return
        top = self._classes[0]
        self.entries[-1].refuses = top.qualified if top is not None else \
            f"{self.module_info.name}.?"
        text = marker(self.ID, reason).removeprefix("# ")
        if text not in self._refusals:
            self._refusals.append(text)

    def require(self, module: str, name: str | None = None) -> None:
        """The rewritten module needs `from module import name` (or `import module`)."""
        self.imports.add((module, name))

    # -- statement tracking -----------------------------------------------------------

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            self._statements.append(node)
        if isinstance(node, cst.ClassDef):
            depth = len(self._classes)
            self._classes.append(self.index.class_at(self.module_info.path, node.name.value)
                                 if depth == 0 else self.component)
        return super().on_visit(node)

    def on_leave(self, original_node: cst.CSTNode, updated_node: Any) -> Any:
        result = super().on_leave(original_node, updated_node)
        if isinstance(original_node, cst.ClassDef):
            self._classes.pop()
            if not self._classes and self._refusals:
                result = _unported(result, self._refusals)
                self._refusals = []
                self.require(HELPERS, UNPORTED)
        if isinstance(original_node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            self._statements.pop()
            comments = self._markers.pop(id(original_node), None)
            if comments:
                result = _with_comments(result, comments)
        return result


def _unported(node: cst.ClassDef, reasons: list[str]) -> cst.ClassDef:
    """`node` decorated `@unported(*reasons)`, added to a decorator it already has."""
    decorators = list(node.decorators)
    for i, decorator in enumerate(decorators):
        call = decorator.decorator
        if isinstance(call, cst.Call) and dotted(call.func) == UNPORTED:
            given = {a.value.evaluated_value for a in call.args
                     if isinstance(a.value, cst.SimpleString)}
            new = [r for r in reasons if r not in given]
            if not new:
                return node
            decorators[i] = decorator.with_changes(decorator=call.with_changes(
                args=[*call.args, *(cst.Arg(_string(r)) for r in new)]))
            return node.with_changes(decorators=decorators)
    decorator = cst.Decorator(cst.Call(cst.Name(UNPORTED),
                                       [cst.Arg(_string(r)) for r in reasons]))
    return node.with_changes(decorators=[*decorators, decorator])


def _string(text: str) -> cst.SimpleString:
    return cst.SimpleString(repr(text) if '"' in text else f'"{text}"')


def _with_comments(node: Any, comments: list[str]) -> Any:
    """`node` with comment lines above it, those it has already left out."""
    if isinstance(node, cst.FlattenSentinel):
        nodes = list(node.nodes)
        return cst.FlattenSentinel([_with_comments(nodes[0], comments), *nodes[1:]])
    if not hasattr(node, "leading_lines"):
        return node
    present = {line.comment.value for line in node.leading_lines if line.comment}
    new = [cst.EmptyLine(comment=cst.Comment(c)) for c in comments if c not in present]
    return node.with_changes(leading_lines=[*node.leading_lines, *new]) if new else node


def drop_arg(args: list[cst.Arg], at: int) -> list[cst.Arg]:
    """`args` less the one at `at`; the argument before a dropped last one takes its
    comma (none, or a trailing one)."""
    args = list(args)
    dropped = args.pop(at)
    if at == len(args) and args:
        args[-1] = args[-1].with_changes(comma=dropped.comma)
    return args


def is_self_call(node: cst.Call, method: str) -> bool:
    """`self.<method>(...)`."""
    func = node.func
    return (isinstance(func, cst.Attribute) and func.attr.value == method
            and isinstance(func.value, cst.Name) and func.value.value == "self")


def keyword(node: cst.Call, name: str) -> cst.Arg | None:
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def dotted(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        inner = dotted(node.value)
        return f"{inner}.{node.attr.value}" if inner else None
    return None


def is_docstring(statement: cst.BaseStatement) -> bool:
    return (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Expr)
            and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))
