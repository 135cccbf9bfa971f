"""Every package folder is installed under the heronbridge namespace; imports point one
way (ARCHITECTURE.md's layers, and inside the runtime) and never run in a circle."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "heronbridge"


@functools.cache
def nodes(source: str) -> tuple[ast.AST, ...]:
    """Every node of a module's tree: parsed once for the checks below."""
    return tuple(ast.walk(ast.parse(source)))


def test_every_package_folder_has_an_init():
    """setuptools finds packages under src/; a folder of modules without __init__.py would
    install as a namespace package that nothing tests as one."""
    missing = sorted(str(folder.relative_to(ROOT)) for folder in PACKAGE.rglob("*")
                     if folder.is_dir() and any(folder.glob("*.py"))
                     and not (folder / "__init__.py").exists()
                     and "seeding" not in folder.parts)
    assert not missing, f"add __init__.py to {missing}"


# ARCHITECTURE.md's layers: the front doors (the CLI, Nimbus, the UI) -> compat, migrate,
# conformance, testing -> shims, jvm -> runtime. Conformance runs what compat loads and
# migrate rewrites, so it may use both; the test harness loads what compat loads and runs
# it on Storm through conformance; jvm (what runs on a JVM: the task host's jar, Storm's
# jars, Kafka brokers) sits beside the shims, on the runtime; no front door is used by
# anything but the CLI, which starts them; every layer may use the leaf
# `heronbridge.errors` (the root exception).
LAYERS = {"runtime": "runtime", "shims": "shims", "compat": "compat",
          "migrate": "migrate", "conformance": "conformance", "testing": "testing", "ui": "ui",
          "nimbus": "nimbus", "kafka": "kafka", "jvm": "jvm"}
ALLOWED = {
    "runtime": set(),
    "shims": {"runtime"},
    "jvm": {"runtime"},
    "kafka": {"shims"},  # streamparse components: the state mixin, nothing of the runtime
    "compat": {"shims", "runtime"},
    "migrate": {"shims", "runtime"},
    "conformance": {"compat", "migrate", "shims", "jvm", "runtime"},
    "testing": {"conformance", "compat", "shims", "runtime"},
    "ui": {"runtime"},  # a tracker: it reads the state manager and asks the masters
    "nimbus": {"compat", "shims", "runtime"},  # Storm's submissions are loaded by compat
    "cli": {"compat", "migrate", "conformance", "testing", "shims", "jvm", "runtime", "ui",
            "nimbus", "kafka"},
}
# Running a topology never needs the conformance suite's code: only the verbs that run it
# and the harness's --on-storm import it (ARCHITECTURE.md).
USES_CONFORMANCE = {"conformance", "cli/conform.py", "cli/bench.py", "testing/on_storm.py"}


def imported_modules(path: Path, root: Path = PACKAGE,
                     texts: bool = False) -> list[tuple[str, int]]:
    """(module, line) for each import in the file, relative ones resolved; with `texts`,
    every string too (the module names given to importlib)."""
    package = ["heronbridge", *path.parent.relative_to(root).parts]
    found = []
    for node in nodes(path.read_text()):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            names = [".".join([*base, node.module] if node.module else base)]
        elif texts and isinstance(node, ast.Constant) and isinstance(node.value, str):
            names = [node.value]
        else:
            continue
        found += [(name, node.lineno) for name in names]
    return found


def imported_layers(path: Path, root: Path = PACKAGE) -> set[tuple[str, int]]:
    """(layer, line) for each heronbridge module the file imports, relative ones resolved."""
    found = set()
    for name, line in imported_modules(path, root):
        parts = name.split(".")
        if parts[0] != "heronbridge" or parts[1:2] == ["errors"]:
            continue
        found.add((LAYERS.get(parts[1], "cli") if len(parts) > 1 else "cli", line))
    return found


def test_every_layer_imports_only_the_layers_beneath_it():
    wrong = []
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE).parts
        layer = LAYERS.get(rel[0], "cli") if len(rel) > 1 else "cli"
        for target, line in imported_layers(path):
            if target != layer and target not in ALLOWED[layer]:
                wrong.append(f"{path.relative_to(ROOT)}:{line}: {layer} imports {target}")
    assert not wrong, "\n".join(sorted(wrong))


def test_the_layer_check_sees_a_wrong_import(tmp_path):
    bad = tmp_path / "runtime" / "state" / "probe.py"
    bad.parent.mkdir(parents=True)
    bad.write_text("from ...compat import CompatError\nimport heronbridge.cli\n"
                   "from ..errors import where\nfrom heronbridge.errors import HeronbridgeError\n")
    assert imported_layers(bad, tmp_path) == {("compat", 1), ("cli", 2), ("runtime", 3)}



def conformance_imports(path: Path, root: Path = PACKAGE) -> list[int]:
    """Lines of a file that import heronbridge.conformance: import statements, and the
    module names given to importlib as text."""
    return sorted({line for name, line in imported_modules(path, root, texts=True)
                   if name == "heronbridge.conformance"
                   or name.startswith("heronbridge.conformance.")})


def test_only_the_conformance_verbs_and_on_storm_import_the_conformance_suite():
    wrong = []
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.split("/")[0] in USES_CONFORMANCE or rel in USES_CONFORMANCE:
            continue
        wrong += [f"{path.relative_to(ROOT)}:{line}" for line in conformance_imports(path)]
    assert not wrong, "these import heronbridge.conformance:\n" + "\n".join(sorted(wrong))


def test_the_conformance_check_sees_every_form_of_import(tmp_path):
    bad = tmp_path / "cli" / "probe.py"
    bad.parent.mkdir(parents=True)
    bad.write_text("from ..conformance import storm\nimport heronbridge.conformance.report\n"
                   "extras.load('heronbridge.conformance.bench.bench', 'conformance', 'x')\n"
                   "from heronbridge.compat import java\ntext = 'heronbridge.conformances'\n")
    assert conformance_imports(bad, tmp_path) == [1, 2, 3]

# Inside the runtime (ARCHITECTURE.md): scheduler -> health -> instance/stream_manager -> wire,
# state, plan. A module of a rank imports only modules of lower ranks, never one beside or
# above it; the package's own __init__ (its public face) is left out.
RUNTIME_RANKS = [
    {"errors", "proto", "procfs", "logfiles", "log_levels"},
    {"config", "telemetry", "statemgr", "addresses", "sampling", "profiles"},
    {"plan"},
    {"wire", "api", "grouping", "loader"},
    {"checkpoint", "process"},
    {"instance", "stream_manager", "topology_master", "metrics_manager", "control",
     "failures"},
    {"health", "testing"},
    {"scheduler"},
    {"admin"},
]
RANK = {part: rank for rank, parts in enumerate(RUNTIME_RANKS) for part in parts}


def runtime_imports(path: Path, root: Path = PACKAGE) -> set[tuple[str, int]]:
    """(runtime part, line) for each runtime module the file imports."""
    package = ["heronbridge", *path.parent.relative_to(root).parts]
    found = set()
    for node in nodes(path.read_text()):
        if isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            module = [*base, node.module] if node.module else base
            names = [".".join([*module, alias.name]) for alias in node.names]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[:2] == ["heronbridge", "runtime"] and len(parts) > 2 \
                    and parts[2] in RANK:
                found.add((parts[2], node.lineno))
    return found


def test_every_runtime_part_imports_only_the_parts_beneath_it():
    runtime = PACKAGE / "runtime"
    unranked = sorted({p.relative_to(runtime).parts[0].removesuffix(".py")
                       for p in runtime.iterdir() if p.name != "__init__.py"
                       and (p.suffix == ".py" or (p / "__init__.py").exists())} - set(RANK))
    assert not unranked, f"give {unranked} a rank in RUNTIME_RANKS"
    wrong = []
    for path in runtime.rglob("*.py"):
        rel = path.relative_to(runtime).parts
        if rel == ("__init__.py",):
            continue
        part = rel[0].removesuffix(".py")
        for target, line in runtime_imports(path):
            if target != part and RANK[target] >= RANK[part]:
                wrong.append(f"{path.relative_to(ROOT)}:{line}: runtime.{part} (rank "
                             f"{RANK[part]}) imports runtime.{target} (rank {RANK[target]})")
    assert not wrong, "\n".join(sorted(wrong))


def test_the_runtime_check_sees_an_import_up_or_sideways(tmp_path):
    bad = tmp_path / "runtime" / "wire" / "probe.py"
    bad.parent.mkdir(parents=True)
    bad.write_text("from ..scheduler import Home\nfrom heronbridge.runtime import statemgr\n"
                   "from ..instance.task import Task\n")
    assert runtime_imports(bad, tmp_path) == {("scheduler", 1), ("statemgr", 2), ("instance", 3)}


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module -> the package's modules it imports (anywhere in it, functions included)."""
    modules = {}
    for path in root.rglob("*.py"):
        rel = path.relative_to(root.parent).with_suffix("").parts
        modules[".".join(rel[:-1] if rel[-1] == "__init__" else rel)] = path

    def known(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        edges = graph.setdefault(module, set())
        for node in nodes(path.read_text()):
            if isinstance(node, ast.ImportFrom):
                base = package.split(".")
                base = base[:len(base) - node.level + 1] if node.level else []
                source = ".".join([*base, node.module] if node.module else base)
                for alias in node.names:  # a submodule, or a name of `source`
                    edges.add(known(f"{source}.{alias.name}") or "")
            elif isinstance(node, ast.Import):
                edges.update(known(alias.name) or "" for alias in node.names)
        edges.discard("")
        edges.discard(module)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected parts of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            part = []
            while True:
                top = stack.pop()
                part.append(top)
                if top == node:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_module_of_the_package_imports_itself_through_others():
    assert circles(import_graph(PACKAGE)) == []


def test_the_circle_check_sees_a_circle(tmp_path):
    package = tmp_path / "heronbridge"
    (package / "a").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "a" / "__init__.py").write_text("")
    (package / "a" / "one.py").write_text("def f():\n    from .two import g\n")
    (package / "a" / "two.py").write_text("from heronbridge.a import one\n")
    (package / "three.py").write_text("from .a import two\n")
    assert circles(import_graph(package)) == [["heronbridge.a.one", "heronbridge.a.two"]]
