"""Every package folder is installed under the heronbridge namespace."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_package_folder_is_listed_in_pyproject():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    found = set()
    for name, folder in config["package-dir"].items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder)
            found.add(".".join([name, *rel.parts]))
    assert found <= listed, f"add to pyproject.toml packages: {sorted(found - listed)}"


# DESIGN.md's layers: the CLI -> compat, migrate, conformance -> shims.storm -> runtime;
# the CLI -> ui -> runtime.
# Conformance runs what compat loads and migrate rewrites, so it may use both; nothing uses
# the CLI, and every layer may use the leaf `heronbridge.errors` (the root exception).
LAYERS = {"heronbridge": "cli", "runtime": "runtime", "shims": "shims", "compat": "compat",
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


def imported_layers(path: Path, folder: str, root: Path = ROOT) -> set[tuple[str, int]]:
    """(layer, line) for each heronbridge module the file imports, relative ones resolved."""
    package = ["heronbridge"] + ([] if folder == "heronbridge" else [folder]) + \
        list(path.parent.relative_to(root / folder).parts)
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
    for folder, layer in LAYERS.items():
        for path in (ROOT / folder).rglob("*.py"):
            for target, line in imported_layers(path, folder):
                if target != layer and target not in ALLOWED[layer]:
                    wrong.append(f"{path.relative_to(ROOT)}:{line}: {layer} imports {target}")
    assert not wrong, "\n".join(sorted(wrong))


def test_the_layer_check_sees_a_wrong_import(tmp_path):
    bad = tmp_path / "runtime" / "state" / "probe.py"
    bad.parent.mkdir(parents=True)
    bad.write_text("from ...compat import CompatError\nimport heronbridge.cli\n"
                   "from ..errors import where\nfrom heronbridge.errors import HeronbridgeError\n")
    assert imported_layers(bad, "runtime", tmp_path) == {("compat", 1), ("cli", 2),
                                                        ("runtime", 3)}
