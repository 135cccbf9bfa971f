"""The package's optional parts: a verb that needs one says which to install."""

from __future__ import annotations

import importlib
from types import ModuleType

from ..errors import HeronbridgeError

# extra -> what it installs, as the modules to import (pyspark's own needs py4j).
EXTRAS = {"conformance": ("pyspark", "py4j.java_gateway", "yaml", "matplotlib")}


class MissingExtra(HeronbridgeError):
    """A verb needs an optional part of the package that is not installed."""


def require(extra: str, who: str) -> None:
    """Raise a clear error unless every module of `extra` imports."""
    for name in EXTRAS[extra]:
        try:
            importlib.import_module(name)
        except ImportError as exc:
            msg = (f"{who} needs the {extra!r} extra, which is not installed ({exc}): "
                   f"pip install 'heronbridge[{extra}]'")
            raise MissingExtra(msg) from exc


def load(module: str, extra: str, who: str) -> ModuleType:
    """Import a module of this package that needs `extra`, after checking for it."""
    require(extra, who)
    return importlib.import_module(module)
