"""Every package folder is installed under the heronbridge namespace."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "heronbridge"


def test_every_package_folder_has_an_init():
    """setuptools finds packages under src/; a folder of modules without __init__.py would
    install as a namespace package that nothing tests as one."""
    missing = sorted(str(folder.relative_to(ROOT)) for folder in PACKAGE.rglob("*")
                     if folder.is_dir() and any(folder.glob("*.py"))
                     and not (folder / "__init__.py").exists()
                     and "seeding" not in folder.parts)
    assert not missing, f"add __init__.py to {missing}"


# DESIGN.md's layers: the CLI -> compat, migrate, conformance -> shims.storm -> runtime;
# the CLI -> ui -> runtime.
# Conformance runs what compat loads and migrate rewrites, so it may use both; nothing uses
# the CLI, and every layer may use the leaf `heronbridge.errors` (the root exception).
LAYERS = {"runtime": "runtime", "shims": "shims", "compat": "compat",
          "migrate": "migrate", "conformance": "conformance", "ui": "ui"}
ALLOWED = {
    "runtime": set(),
    "shims": {"runtime"},
    "compat": {"shims", "runtime"},
    "migrate": {"shims", "runtime"},
    "conformance": {"compat", "migrate", "shims", "runtime"},
    "ui": {"runtime"},  # a tracker: it reads the state manager and asks the masters
    "cli": {"compat", "migrate", "conformance", "shims", "runtime", "ui"},
}


def imported_layers(path: Path, root: Path = PACKAGE) -> set[tuple[str, int]]:
    """(layer, line) for each heronbridge module the file imports, relative ones resolved."""
    package = ["heronbridge", *path.parent.relative_to(root).parts]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            names = [".".join([*base, node.module] if node.module else base)]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] != "heronbridge" or parts[1:2] == ["errors"]:
                continue
            found.add((LAYERS.get(parts[1], "cli") if len(parts) > 1 else "cli", node.lineno))
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
