"""HB008: Storm config keys as Heron reads them, and the reliability mode.

Storm acks unless `topology.acker.executors` is 0; heronpy's default mode is at most
once, so a topology that acks is given `topology.reliability.mode: ATLEAST_ONCE`, unless
it sets a mode of its own.
`topology.workers` is `topology.stmgrs` in Heron; pystorm's, the multilang serializer's
and streamparse's virtualenv keys mean nothing there and go.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from ..analysis import TOPOLOGY, Index, ModuleInfo
from ..rule import Rule, is_docstring

RENAMED = {"topology.workers": "topology.stmgrs"}
ACKERS = "topology.acker.executors"
MODE = "topology.reliability.mode"
ATLEAST_ONCE = "ATLEAST_ONCE"
DROPPED_PREFIXES = ("pystorm.", "virtualenv", "topology.multilang.", "streamparse.")


def _dropped(key: str) -> bool:
    return key.startswith(DROPPED_PREFIXES) or key in ("use_virtualenv",
                                                        "install_virtualenv")


class ConfigRule(Rule):
    ID = "HB008"
    NAME = "config"
    DESCRIPTION = "Storm config keys renamed for Heron; the reliability mode set"

    @classmethod
    def applies(cls, index: Index, module: ModuleInfo) -> bool:
        return TOPOLOGY in index.kinds_in(module)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._topology_config: list[cst.Dict] = []

    def _rewrite(self, original: cst.Dict, updated: cst.Dict, topology: bool) -> cst.Dict:
        elements, acking, moded = [], True, False
        for old, new in zip(original.elements, updated.elements, strict=True):
            key = old.key.evaluated_value if isinstance(old, cst.DictElement) and \
                isinstance(old.key, cst.SimpleString) else None
            if not isinstance(key, str):
                elements.append(new)
                continue
            moded = moded or key == MODE  # the topology's own mode (EFFECTIVELY_ONCE) stays
            if key == ACKERS:
                acking = not (isinstance(old.value, cst.Integer) and old.value.evaluated_value == 0)
                self.converted(old, f"{ACKERS} -> {MODE}")
                continue
            if _dropped(key):
                self.converted(old, f"dropped {key!r}: Heron has no such setting")
                continue
            if key in RENAMED:
                self.converted(old, f"{key!r} -> {RENAMED[key]!r}")
                quote = old.key.quote
                elements.append(new.with_changes(
                    key=cst.SimpleString(f"{quote}{RENAMED[key]}{quote}")))
                continue
            elements.append(new)
        if topology and acking and not moded:
            elements.append(cst.DictElement(cst.SimpleString(f'"{MODE}"'),
                                            cst.SimpleString(f'"{ATLEAST_ONCE}"')))
            self.converted(original, f"{MODE}: {ATLEAST_ONCE} (Storm acks by default)")
        elements = _commas(elements, list(updated.elements), updated.lbrace)
        return updated.with_changes(elements=elements)

    def leave_Assign(self, original_node: cst.Assign,
                     updated_node: cst.Assign) -> cst.Assign:
        if not (self.kind() == TOPOLOGY and len(self._statements) == 2
                and len(original_node.targets) == 1
                and isinstance(original_node.targets[0].target, cst.Name)
                and original_node.targets[0].target.value == "config"):
            return updated_node
        if isinstance(original_node.value, cst.Dict):
            self._topology_config.append(original_node.value)
            return updated_node.with_changes(
                value=self._rewrite(original_node.value, updated_node.value, topology=True))
        self.todo(original_node, f"config is not a dict literal: rename Storm keys for Heron "
                  f"and set {MODE!r} to {ATLEAST_ONCE!r} if the topology acks")
        return updated_node

    def leave_Arg(self, original_node: cst.Arg, updated_node: cst.Arg) -> cst.Arg:
        if (self.kind() == TOPOLOGY and original_node.keyword is not None
                and original_node.keyword.value == "config"
                and isinstance(original_node.value, cst.Dict)):
            return updated_node.with_changes(
                value=self._rewrite(original_node.value, updated_node.value, topology=False))
        return updated_node

    def leave_ClassDef(self, original_node: cst.ClassDef,
                       updated_node: cst.ClassDef) -> cst.ClassDef:
        if len(self._classes) != 1 or self.kind() != TOPOLOGY:
            return updated_node
        if self.component is not None and "config" in self.component.attributes:
            return updated_node
        body = list(updated_node.body.body)
        at = 1 if body and is_docstring(body[0]) else 0
        line = cst.parse_statement(f'config = {{"{MODE}": "{ATLEAST_ONCE}"}}')
        self.converted(original_node, f"{MODE}: {ATLEAST_ONCE} (Storm acks by default)")
        return updated_node.with_changes(body=updated_node.body.with_changes(
            body=[*body[:at], line, *body[at:]]))


def _commas(kept: list, given: list, lbrace: cst.LeftCurlyBrace) -> list:
    """Commas for the elements left (and added) in a dict, in the dict's own layout:
    the last takes the last one's (a trailing comma before a newline stays), the others
    keep theirs or take the one between elements."""
    if not kept or not given:
        return kept
    last = given[-1].comma
    if len(given) > 1:
        inner = given[-2].comma
    elif isinstance(lbrace.whitespace_after, cst.ParenthesizedWhitespace):
        inner = cst.Comma(whitespace_after=lbrace.whitespace_after)
    else:
        inner = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    result = []
    for i, element in enumerate(kept):
        if i == len(kept) - 1:
            result.append(element.with_changes(comma=last))
        elif element.comma is cst.MaybeSentinel.DEFAULT or element.comma is last:
            result.append(element.with_changes(comma=inner))
        else:
            result.append(element)
    return result
