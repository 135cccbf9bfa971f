#!/usr/bin/env bash
# Regenerates tests/runtime/data/javahash_vectors.json from cases.json by running the cases
# through Storm's own multilang JSON parsing and groupers (see JavaHashOracle.java).
#
# Env: STORM_VERSION (default 2.8.8; must resolve through Maven), PYTHON, JAVA, MVN,
#      ORACLE_BUILD_DIR (default: a directory under $TMPDIR, so the source tree stays clean).
# Usage: tools/java_oracle/regenerate.sh [output.json]
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${1:-$root/tests/runtime/data/javahash_vectors.json}"
storm_version="${STORM_VERSION:-2.8.8}"
mvn="${MVN:-mvn}"
java="${JAVA:-java}"
python="${PYTHON:-}"
if [ -z "$python" ]; then
    if [ -x "$root/.venv/bin/python" ]; then python="$root/.venv/bin/python"; else python=python3; fi
fi

# javahash.java_string follows the Java 19+ Double.toString specification; Java 17 prints some
# doubles with other digits, which only partial key grouping without fields would notice.
java_spec="$("$java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')"
if [ "${java_spec%%.*}" -lt 19 ]; then
    echo "regenerate.sh: need a Java 19+ runtime (JAVA=/path/to/bin/java), found $java_spec" >&2
    exit 1
fi

build="${ORACLE_BUILD_DIR:-${TMPDIR:-/tmp}/heronbridge-java-oracle}"
mkdir -p "$build"

cd "$here"
"$mvn" -q -B -Dstorm.version="$storm_version" -Doracle.build.dir="$build" \
    compile dependency:build-classpath -Dmdep.outputFile="$build/classpath.txt"

# The wire text of every tuple is what Python's json.dumps sends (as storm.py does), so it is
# produced by Python here rather than written by hand.
"$python" - cases.json "$build/wire-cases.json" <<'PY'
import ast
import json
import math
import operator
import sys

OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
       ast.Div: operator.truediv, ast.Pow: operator.pow}
NAMES = {"nan": math.nan, "inf": math.inf}


def ev(node):
    if isinstance(node, ast.Expression):
        return ev(node.body)
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.List):
        return [ev(e) for e in node.elts]
    if isinstance(node, ast.Tuple):
        return tuple(ev(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return {ev(k): ev(v) for k, v in zip(node.keys, node.values)}
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = ev(node.operand)
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.BinOp) and type(node.op) in OPS:
        return OPS[type(node.op)](ev(node.left), ev(node.right))
    if isinstance(node, ast.Name) and node.id in NAMES:
        return NAMES[node.id]
    raise ValueError(f"unsupported expression: {ast.dump(node)}")


def py(src):
    return ev(ast.parse(src, mode="eval"))


with open(sys.argv[1], encoding="utf-8") as fh:
    cases = json.load(fh)
wire = {
    "values": [{"py": s, "wire": json.dumps([py(s)])} for s in cases["values"]],
    "fields": [dict(c, wire=json.dumps(py(c["py"]))) for c in cases["fields"]],
    "pkg": [],
    "random": cases["random"],
}
for c in cases["pkg"]:
    emits = []
    for e in c["emits"]:
        emitter, src = (0, e) if isinstance(e, str) else e
        emits.append({"emitter": emitter, "py": src, "wire": json.dumps(py(src))})
    wire["pkg"].append(dict(c, emits=emits))
with open(sys.argv[2], "w", encoding="utf-8") as fh:
    json.dump(wire, fh, ensure_ascii=True)
PY

# PartialKeyGrouping without fields uses String.getBytes() in the default charset: pin UTF-8.
"$java" -Dfile.encoding=UTF-8 -cp "$build/classes:$(cat "$build/classpath.txt")" \
    heronbridge.oracle.JavaHashOracle "$build/wire-cases.json" "$out"
echo "wrote $out"
