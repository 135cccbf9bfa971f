"""HB003: what pystorm did around `process` is written out.

pystorm acks every tuple after `process` returns (`auto_ack`), anchors every emit made
during `process` to that tuple (`auto_anchor`) and fails the tuple when `process` raises
(`auto_fail`); storm.py's BasicBolt does the same, and fails without dying. heronpy does
none of it. Each flag the class (or a base in the tree) leaves on becomes code in
`process`: `anchors=[tup]` on its emits, `self.ack(tup)` on every way out, a try/except
that fails the tuple. Emits pystorm would anchor elsewhere (a helper called from
`process`) get a marker.

In a hierarchy (hierarchy.py) this goes into the first `process` heronpy calls, a mixin's
too, with the flags of the classes that run it; a `process` that another reaches through
`super()` acks and fails only when heronpy called it first.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from ..analysis import BOLT, STORM_BASIC_BOLT, Index, ModuleInfo
from ..hierarchy import Injection, plan_of
from ..rule import NO_SPACES, Rule, is_docstring, is_self_call, keyword

KINDS = (BOLT, STORM_BASIC_BOLT)
NOT_ANCHORED = ("process", "process_tick", "initialize")


class AutoAckRule(Rule):
    ID = "HB003"
    NAME = "auto-ack"
    DESCRIPTION = "auto_ack, auto_anchor and auto_fail made explicit in process()"

    @classmethod
    def applies(cls, index: Index, module: ModuleInfo) -> bool:
        plan = plan_of(index)
        return bool(index.kinds_in(module) & set(KINDS)) or any(
            c.qualified in plan.injections for c in module.classes.values())

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._functions: list[str] = []  # the def names we are in, outermost first
        self._tuple: str | None = None  # process's tuple parameter, while inside it
        self._injection: Injection | None = None

    def _flag(self, name: str) -> bool:
        if self._injection is not None:
            return self._injection.flags[name]
        info = self.component
        return info is not None and self.index.flag(info, name)

    def _in_process(self) -> bool:
        return self._tuple is not None and len(self._functions) == 1

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self._functions.append(node.name.value)
        info = self.component
        injection = plan_of(self.index).injections.get(info.qualified) \
            if info is not None else None
        if (node.name.value == "process" and len(self._functions) == 1
                and len(self._classes) == 1 and info is not None and injection is not None):
            params = node.params.params
            self._tuple = params[1].name.value if len(params) == 2 else None
            self._injection = injection if self._tuple is not None else None
            if self._tuple is None:
                self.todo(node, "expected process(self, tup); make acking explicit by hand")
            elif injection.mixed:
                self.todo(node, f"{', '.join(injection.mixed)} run this process() with other "
                          f"auto_ack, auto_anchor or auto_fail flags than {info.name}, whose "
                          "flags it was written out with; give them a process() of their own")
        return True

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        self._functions.append("<lambda>")
        return True

    def leave_Lambda(self, original_node: cst.Lambda,
                     updated_node: cst.Lambda) -> cst.BaseExpression:
        self._functions.pop()
        return updated_node

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        if not is_self_call(original_node, "emit") or (
                self.kind() not in KINDS and not self._in_process()):
            return updated_node
        positional = [a for a in original_node.args if a.keyword is None]
        if keyword(original_node, "anchors") or len(positional) >= 3 \
                or any(a.star for a in original_node.args) or not self._flag("auto_anchor"):
            return updated_node
        if self._in_process():
            self.converted(original_node, f"emit anchored to {self._tuple} (auto_anchor)")
            anchors = cst.Arg(keyword=cst.Name("anchors"), equal=NO_SPACES,
                              value=cst.List([cst.Element(cst.Name(self._tuple))]))
            return updated_node.with_changes(args=[*updated_node.args, anchors])
        if self.kind() in KINDS and self._functions and \
                self._functions[0] not in NOT_ANCHORED:
            self.todo(original_node, "pystorm anchored emits made while process() runs to "
                      "its tuple (auto_anchor); if this runs from process(), pass "
                      "anchors=[tup]")
        return updated_node

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine,
                                  updated_node: cst.SimpleStatementLine):
        if not (self._in_process() and self._flag("auto_ack")):
            return updated_node
        if not any(isinstance(s, cst.Return) for s in updated_node.body):
            return updated_node
        if self._tuple is None:  # _in_process() said it is set
            return updated_node
        ack = self._ack(self._tuple)
        return cst.FlattenSentinel([ack.with_changes(leading_lines=updated_node.leading_lines),
                                    updated_node.with_changes(leading_lines=[])])

    def leave_FunctionDef(self, original_node: cst.FunctionDef,
                          updated_node: cst.FunctionDef) -> cst.FunctionDef:
        name = self._functions.pop()
        if not (name == "process" and not self._functions and self._tuple is not None):
            return updated_node
        tup, self._tuple = self._tuple, None
        body = list(updated_node.body.body)
        docstring = body[:1] if body and is_docstring(body[0]) else []
        body = body[len(docstring):] or [cst.SimpleStatementLine([cst.Pass()])]
        ack, fail = self._flag("auto_ack"), self._flag("auto_fail")
        if fail:
            basic = self._injection is not None and self._injection.kind == STORM_BASIC_BOLT
            body = [_guarded(body, self._first(f"self.fail({tup})"), reraise=not basic)]
            self.converted(original_node, f"process fails {tup} when it raises (auto_fail)")
        if ack:
            body.append(self._ack(tup))
            self.converted(original_node, f"process acks {tup} on every way out (auto_ack)")
        self._injection = None
        return updated_node.with_changes(
            body=updated_node.body.with_changes(body=[*docstring, *body]))

    def _ack(self, tup: str) -> cst.BaseStatement:
        return self._first(f"self.ack({tup})")

    def _first(self, statement: str) -> cst.BaseStatement:
        """`statement`, or, in a process another reaches through super(), `statement`
        when heronpy called this process first (pystorm acked after the outermost)."""
        line = cst.parse_statement(statement)
        if self._injection is None or not self._injection.guarded:
            return line
        return cst.If(test=cst.parse_expression(
            f"type(self).process is {self.owner.name}.process"),
            body=cst.IndentedBlock([line]))


def _guarded(body: list[cst.BaseStatement], fail: cst.BaseStatement, reraise: bool) -> cst.Try:
    handler = [fail]
    if reraise:
        handler.append(cst.parse_statement("raise"))
    else:  # storm.py's BasicBolt reports the error, fails the tuple and goes on
        handler = [cst.parse_statement('self.logger.exception("process failed")'),
                   *handler, cst.parse_statement("return")]
    return cst.Try(
        body=cst.IndentedBlock(body),
        handlers=[cst.ExceptHandler(body=cst.IndentedBlock(handler),
                                    type=cst.Name("Exception"))])

