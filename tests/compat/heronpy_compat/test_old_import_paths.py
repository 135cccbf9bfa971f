"""Code migrated (or written) before the heronpy host moved to heronbridge.shims.heronpy
imports from heronbridge.compat.heronpy: those names still import, as the same objects."""

from __future__ import annotations

import subprocess
import sys

from heronbridge.migrate.homes import EXTRAS, HELPERS

SAME = """
import importlib
for name in ("migrated", "extras", "sink"):
    old = importlib.import_module(f"heronbridge.compat.heronpy.{name}")
    assert old is importlib.import_module(f"heronbridge.shims.heronpy.{name}"), name
from heronbridge.compat.heronpy.extras import ReliableSpout as Old
from heronbridge.shims.heronpy.extras import ReliableSpout as New
assert Old is New
print("same")
"""


def test_the_old_paths_are_the_new_modules():
    # A fresh interpreter: loading a project forgets the modules it imported.
    done = subprocess.run([sys.executable, "-c", SAME], capture_output=True, text=True,
                          check=False)
    assert done.stdout.strip() == "same", done.stderr


def test_migrated_code_imports_the_new_home():
    assert (HELPERS, EXTRAS) == ("heronbridge.shims.heronpy.migrated",
                                 "heronbridge.shims.heronpy.extras")
