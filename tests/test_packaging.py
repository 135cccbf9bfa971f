"""Every package folder is installed under the heronbridge namespace."""

from __future__ import annotations

import re
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


def test_the_runtime_imports_nothing_from_the_other_layers():
    layers = "compat|shims|migrate|conformance|cli|status"
    pattern = re.compile(rf"^\s*(from|import)\s+(heronbridge\.({layers})|\.\.+({layers}))\b",
                         re.MULTILINE)
    for path in (ROOT / "runtime").rglob("*.py"):
        match = pattern.search(path.read_text())
        assert match is None, f"{path} imports another layer: {match.group(0)!r}"
