"""pystorm's component attributes, derived from pystorm's own classes, against the table
the rules follow (migrate/attributes.py); and each attribute read in initialize, in
process or next_tuple, and in a helper method, through the codemod."""

from __future__ import annotations

import ast
import inspect
import logging
import pathlib
import re
import textwrap
from types import SimpleNamespace

import pystorm
import pytest
import streamparse

from heronbridge.migrate import analysis
from heronbridge.migrate.attributes import ATTRIBUTES, COMPONENT, HAVE, KEPT, MARKED, SET, value
from heronbridge.migrate.runner import migrate
from heronbridge.shims.heronpy import extras

# pystorm's classes (and streamparse's, which add the DSL's), first to last: an attribute's
# owner is the first that has it.
PYSTORM = {
    COMPONENT: (pystorm.component.Component, streamparse.storm.component.Component),
    analysis.BOLT: (pystorm.Bolt, streamparse.Bolt),
    analysis.SPOUT: (pystorm.Spout, streamparse.Spout),
    analysis.BATCHING_BOLT: (pystorm.BatchingBolt, streamparse.BatchingBolt),
    analysis.TICKLESS_BATCHING_BOLT: (pystorm.TicklessBatchingBolt,
                                      streamparse.TicklessBatchingBolt),
    analysis.RELIABLE_SPOUT: (pystorm.ReliableSpout, streamparse.ReliableSpout),
}
# What each kind of component derives from once migrated (heronpy's Bolt and Spout as
# extras imports them: importing heronbridge.shims.heronpy first lets heronpy load).
HERONPY = {analysis.BOLT: extras.Bolt, analysis.SPOUT: extras.Spout,
           analysis.BATCHING_BOLT: extras.BatchingBolt,
           analysis.TICKLESS_BATCHING_BOLT: extras.TicklessBatchingBolt,
           analysis.RELIABLE_SPOUT: extras.ReliableSpout}


def attributes_of(cls: type) -> set[str]:
    """What a class defines (not dunders) and what its methods set on `self`."""
    names = {n for n in vars(cls) if not (n.startswith("__") and n.endswith("__"))}
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and \
                isinstance(node.value, ast.Name) and node.value.id == "self":
            names.add(node.attr)
    return names


def owners() -> dict[str, str]:
    """Every attribute of pystorm's component classes, with the first class having it."""
    found: dict[str, str] = {}
    for owner, classes in PYSTORM.items():
        for cls in classes:
            for name in sorted(attributes_of(cls)):
                found.setdefault(name, owner)
    return found


def test_the_rules_know_every_attribute_pystorm_has():
    found = owners()
    assert len(found) > 50  # the derivation sees pystorm's classes at all
    unknown = sorted(set(found) - set(ATTRIBUTES))
    assert not unknown, f"pystorm has attributes the rules do not know: {unknown}"
    stale = sorted(set(ATTRIBUTES) - set(found))
    assert not stale, f"the table names attributes pystorm does not have: {stale}"
    wrong = {n: (a.owner, found[n]) for n, a in ATTRIBUTES.items() if a.owner != found[n]}
    assert not wrong, wrong


def test_the_rules_know_every_component_class_pystorm_has():
    """A component class pystorm gains (newer pystorm has AsyncBolt) needs rules too."""
    known = {cls for classes in PYSTORM.values() for cls in classes}
    classes = {getattr(pystorm, n) for n in pystorm.__all__}
    components = {c for c in classes if isinstance(c, type)
                  and issubclass(c, pystorm.component.Component)}
    assert components <= known, sorted(c.__name__ for c in components - known)


def test_what_is_kept_is_there_under_heronpy():
    delegate = SimpleNamespace(logger=logging.getLogger("kept"))
    for name, attribute in ATTRIBUTES.items():
        if attribute.becomes != KEPT and not attribute.kept_in:
            continue
        kinds = attribute.kept_in or HAVE[attribute.owner]
        for kind in kinds:
            if name in ("outputs", "par", "config"):
                continue  # streamparse's class attributes: the user's class sets them
            instance = HERONPY[kind](delegate=delegate)
            assert hasattr(instance, name), f"{name} of a {kind}"


def test_every_attribute_has_what_its_treatment_needs():
    for name, attribute in ATTRIBUTES.items():
        assert attribute.becomes in (SET, KEPT, MARKED), name
        assert attribute.detail, name
        if attribute.becomes == SET:
            compile(f"self.{name} = {value(name, analysis.SPOUT)}", name, "exec")


# -- each attribute read in initialize, in process/next_tuple and in a helper -------------

BOLT = '''
from streamparse import {base}


class Reader({base}):
    def initialize(self, conf, ctx):
        self.first = self.{name}

    def {hook}(self, {arg}):
        self.emit([self.{name}]{tup_id})

    def helper(self):
        return self.{name}
'''
KIND_OF = {"Bolt": analysis.BOLT, "Spout": analysis.SPOUT, "BatchingBolt":
           analysis.BATCHING_BOLT, "TicklessBatchingBolt": analysis.TICKLESS_BATCHING_BOLT,
           "ReliableSpout": analysis.RELIABLE_SPOUT}


def reader(name: str) -> tuple[str, str]:
    """A component of the first kind that has `name`, reading it three ways; and its kind."""
    base = next(b for b, kind in KIND_OF.items() if ATTRIBUTES[name].applies(kind)
                and kind not in ATTRIBUTES[name].kept_in)
    spout = "Spout" in base
    source = BOLT.format(base=base, name=name, hook="next_tuple" if spout else "process",
                         arg="" if spout else "tup", tup_id=", tup_id=1" if spout else "")
    return source.replace("(self, )", "(self)"), KIND_OF[base]


@pytest.fixture(scope="module")
def readers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Every attribute's reader, migrated in one tree: {attribute: the module's text}."""
    root = tmp_path_factory.mktemp("readers")
    for name in ATTRIBUTES:
        (root / f"reader_{name.strip('_')}_{len(name)}.py").write_text(reader(name)[0])
    outcome = migrate(root, jobs=1)
    assert not outcome.failed, outcome.failed
    return {name: (root / f"reader_{name.strip('_')}_{len(name)}.py").read_text()
            for name in ATTRIBUTES}


@pytest.mark.parametrize("name", sorted(ATTRIBUTES))
def test_each_attribute_read_three_ways(name: str, readers: dict[str, str]):
    text = readers[name]
    compile(text, "reader.py", "exec")
    lines = text.splitlines()
    marker = f"# TODO(heronbridge:HB005): self.{name}: {ATTRIBUTES[name].detail}"
    marked = [i for i, line in enumerate(lines) if line.strip() == marker]
    reads = [i for i, line in enumerate(lines) if f"= self.{name}" in line
             or f"[self.{name}]" in line or f"return self.{name}" in line]
    assert len(reads) == 3, text  # initialize, the hook, the helper
    attribute = ATTRIBUTES[name]
    if attribute.becomes == MARKED:
        # each read has its marker above it, and the line naming the rule's docs section
        assert [i + 2 for i in marked] == reads, text
        assert all("codemod.md#hb005-component-api" in lines[i + 1] for i in marked), text
        return
    assert not marked, text
    body = text.split("def initialize(self, config, context):\n", 1)[1]
    prologue = body.split(f"self.first = self.{name}", 1)[0]
    if attribute.becomes == SET:
        assert f"self.{name} = {value(name, reader(name)[1])}\n" in prologue, text
        for module, symbol in attribute.imports:
            imported = f"import {module}" if symbol is None else f"from {module} import"
            assert imported in text and (symbol is None or symbol in text), text
    else:
        assert f"self.{name} =" not in prologue, text


def test_every_rules_marker_names_a_docs_section_that_exists():
    from heronbridge.migrate.rule import manual
    from heronbridge.migrate.rules import RULES

    root = pathlib.Path(__file__).resolve().parents[2]
    for rule in RULES:
        path, anchor = manual(rule.ID, rule.NAME).split("'s ", 1)[1].split()[0].split("#")
        page = (root / path).read_text()
        anchors = {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
                   for h in re.findall(r"^#+ (.+)$", page, re.M)}
        assert anchor in anchors, (rule.ID, anchor)
