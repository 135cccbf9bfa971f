"""Loading a topology written against the runtime's own API from a Python file."""

from __future__ import annotations

import importlib.util
import sys
import traceback
from pathlib import Path
from types import ModuleType

from .errors import PlanError
from .plan.builder import TopologyBuilder
from .plan.logical import LogicalPlan


class FileImportError(PlanError):
    """A Python file raised while it was imported; `__cause__` is what it raised."""


def import_file(path: str | Path) -> ModuleType:
    """Import a file as the module named after its stem, registered in sys.modules (so its
    classes pickle by name). What it raises becomes a FileImportError that names the file
    and, when the error came from a module it imported, that module's file and line."""
    path = Path(path)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    if spec is None or spec.loader is None:
        msg = f"{path}: expected a Python file, received one Python cannot import"
        raise FileImportError(msg)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as exc:
        msg = f"{str(path)!r} failed to import: {type(exc).__name__}: {exc}{_origin(exc, path)}"
        raise FileImportError(msg) from exc
    return module


def _origin(exc: BaseException, path: Path) -> str:
    """' (raised at FILE:LINE)' for the innermost frame of the user's own code, where it is
    not the imported file itself; for a file that does not compile, the file and line at
    fault (its traceback ends in the file that imported it)."""
    if isinstance(exc, SyntaxError) and exc.filename and not exc.filename.startswith("<"):
        if Path(exc.filename) == path:
            return ""
        return f" (in {exc.filename}:{exc.lineno})"
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if "importlib" not in f.filename and "/site-packages/" not in f.filename]
    if not frames or Path(frames[-1].filename) == path:
        return ""
    return f" (raised at {frames[-1].filename}:{frames[-1].lineno})"


def load_topology_file(path: str | Path, name: str | None = None) -> LogicalPlan:
    """Import `path` as a module (its folder on sys.path) and return the topology in it.

    The module defines a TopologyBuilder or a LogicalPlan at module level; with several,
    `name` picks one by topology name.
    """
    path = Path(path).resolve()
    if not path.is_file():
        msg = f"expected a topology file, received {str(path)!r} (no such file)"
        raise PlanError(msg)
    folder = str(path.parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    try:
        module = import_file(path)
    except FileImportError as exc:
        if isinstance(exc.__cause__, PlanError):
            raise exc.__cause__ from None
        msg = f"topology file {exc}"
        raise PlanError(msg) from exc.__cause__
    found = {}
    for value in vars(module).values():
        if isinstance(value, TopologyBuilder):
            value.add_python_path(folder)
            plan = value.build()
        elif isinstance(value, LogicalPlan):
            plan = value.validate()
        else:
            continue
        if folder not in plan.python_path:
            plan.python_path.append(folder)
        found[plan.name] = plan
    if not found:
        msg = f"{str(path)!r} defines no TopologyBuilder or LogicalPlan at module level"
        raise PlanError(msg)
    if name is not None:
        if name not in found:
            msg = f"{str(path)!r} defines topologies {sorted(found)}, not {name!r}"
            raise PlanError(msg)
        return found[name]
    if len(found) > 1:
        msg = f"{str(path)!r} defines several topologies {sorted(found)}; pick one with -n"
        raise PlanError(msg)
    return next(iter(found.values()))
