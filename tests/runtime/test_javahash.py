"""javahash against vectors computed by Storm's own classes (tools/java_oracle/regenerate.sh)."""

import ast
import json
import math
import operator
from pathlib import Path

import pytest

from heronbridge.runtime.grouping.javahash import (
    PartialKeyChooser,
    _JavaRandom,
    deep_hash_code,
    fields_index,
    java_hash,
    java_string,
)

VECTORS = json.loads(
    (Path(__file__).parent / "data" / "javahash_vectors.json").read_text(encoding="utf-8")
)
MAX_N = VECTORS["meta"]["max_n"]

_OPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
}
_NAMES = {"nan": math.nan, "inf": math.inf}


def _ev(node):
    if isinstance(node, ast.Expression):
        return _ev(node.body)
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.List):
        return [_ev(e) for e in node.elts]
    if isinstance(node, ast.Tuple):
        return tuple(_ev(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return {_ev(k): _ev(v) for k, v in zip(node.keys, node.values, strict=True)}
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _ev(node.operand)
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_ev(node.left), _ev(node.right))
    if isinstance(node, ast.Name) and node.id in _NAMES:
        return _NAMES[node.id]
    msg = f"unsupported case expression: {ast.dump(node)}"
    raise ValueError(msg)


def py(src):
    """The Python value of a case expression (the same evaluator regenerate.sh uses)."""
    return _ev(ast.parse(src, mode="eval"))


def units(s):
    """UTF-16 code units: JSON round trips join surrogate pairs that Java keeps as two chars."""
    return s.encode("utf-16-le", "surrogatepass")


def _id(case):
    return case["py"] if len(case["py"]) <= 40 else case["py"][:37] + "..."


VALUES = VECTORS["values"]
FIELDS = VECTORS["fields"]
PKG = VECTORS["pkg"]
RANDOM = VECTORS["random"]


def test_vectors_come_from_storm_2_8_8():
    meta = VECTORS["meta"]
    assert meta["storm_version"] == "2.8.8"
    assert meta["json_smart_version"] == "2.6.0"
    assert meta["default_charset"] == "UTF-8"
    assert len(VALUES) > 100 and len(FIELDS) > 50 and len(PKG) > 10 and len(RANDOM) > 50


WIRES = (
    [([c["py"]], c["wire"]) for c in VALUES]
    + [(c["py"], c["wire"]) for c in FIELDS]
    + [(e["py"], e["wire"]) for c in PKG for e in c["emits"]]
)


@pytest.mark.parametrize(("src", "wire"), WIRES, ids=[str(w[0])[:40] for w in WIRES])
def test_wire_is_what_python_sends(src, wire):
    value = [py(src[0])] if isinstance(src, list) else py(src)
    assert json.dumps(value) == wire


@pytest.mark.parametrize("case", VALUES, ids=_id)
def test_java_hash(case):
    assert java_hash(py(case["py"])) == case["hash"], case["java_type"]


@pytest.mark.parametrize("case", VALUES, ids=_id)
def test_single_field_index(case):
    value = py(case["py"])
    assert deep_hash_code([value]) == (31 + case["hash"] + 2**31) % 2**32 - 2**31
    assert [fields_index([value], n) for n in range(1, MAX_N + 1)] == case["index"]
    assert [fields_index((value,), n) for n in range(1, MAX_N + 1)] == case["index"]


@pytest.mark.parametrize("case", [c for c in VALUES if c["to_string"] is not None], ids=_id)
def test_java_string(case):
    assert units(java_string(py(case["py"]))) == units(case["to_string"])


def test_java_string_of_null_raises():
    with pytest.raises(TypeError):
        java_string(None)


@pytest.mark.parametrize("case", FIELDS, ids=lambda c: f"{_id(c)}{c['fields']}")
def test_fields_grouping(case):
    values = py(case["py"])
    selected = [values[i] for i in case["fields"]]
    assert [java_hash(v) for v in values] == case["hashes"]
    assert deep_hash_code(selected) == case["deep_hash"]
    assert [fields_index(selected, n) for n in range(1, MAX_N + 1)] == case["index"]


@pytest.mark.parametrize("case", PKG, ids=lambda c: c["name"])
def test_partial_key_grouping(case):
    by_fields = case["fields"] is not None
    choosers = {}
    chosen = []
    for emit in case["emits"]:
        chooser = choosers.setdefault(emit["emitter"], PartialKeyChooser(case["n"], by_fields))
        values = py(emit["py"])
        key = [values[i] for i in case["fields"]] if by_fields else values[0]
        chosen.append(chooser.choose(key))
    assert chosen == case["chosen"]
    emitted = {}
    for emit, index in zip(case["emits"], chosen, strict=True):
        emitted.setdefault(emit["emitter"], [0] * case["n"])[index] += 1
    assert {e: c.counts for e, c in choosers.items()} == emitted


@pytest.mark.parametrize("case", RANDOM, ids=lambda c: f"seed={c['seed']},bound={c['bound']}")
def test_java_random(case):
    rnd = _JavaRandom(case["seed"])
    assert [rnd.next_int(case["bound"]) for _ in case["draws"]] == case["draws"]


def test_partial_key_candidates_are_distinct_unless_one_task():
    assert PartialKeyChooser(1).candidates(["k"]) == (0, 0)
    for n in range(2, MAX_N + 1):
        first, second = PartialKeyChooser(n).candidates(["k"])
        assert first != second and 0 <= first < n and 0 <= second < n


def test_not_json_serializable_raises():
    with pytest.raises(TypeError):
        java_hash({1, 2})
    with pytest.raises(TypeError):
        java_hash({(1, 2): "tuple key"})
