"""What a test names, as a plan the harness runs: a LogicalPlan (the runtime's API), a
project folder in streamparse's layout (streamparse or heronpy components), or a Python
file (a heronpy topology, or a runtime topology) -- and the process state a run changes,
put back afterwards.

Components run in the test's process: they import the project's modules from a copy of
its src/, change the working folder to it (as Storm runs them in their resources) and
set up logging as pystorm does. `Sandbox` undoes all of that, so that the next test (or
another project with modules of the same names) starts clean.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import sys
import tempfile
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from heronbridge.runtime.plan.logical import LogicalPlan

from .errors import TestingError


@dataclass
class Loaded:
    plan: LogicalPlan
    folders: list[Path]  # where the user's modules come from (forgotten afterwards)
    project: Any = None  # a compat Project, for a project folder


def load(source: Any, name: str | None, env: str | None, config: dict[str, Any] | None,
         workdir: Path) -> Loaded:
    """The plan of `source`, with `config` over its options (for a project, with sparse's
    precedence: as `-o` options)."""
    config = dict(config or {})
    if isinstance(source, LogicalPlan):
        if name is not None and name != source.name:
            msg = f"expected the plan named {name!r}, received plan {source.name!r}"
            raise TestingError(msg)
        plan = dataclasses.replace(source, config={**source.config, **config},
                                   components=dict(source.components))
        return Loaded(plan, [Path(p) for p in plan.python_path])
    path = Path(source) if isinstance(source, (str, os.PathLike)) else None
    if path is None or not path.exists():
        msg = ("expected a LogicalPlan, a project folder (streamparse's layout) or a "
               f"topology file, received {source!r}"
               + (" (no such file or folder)" if path is not None else ""))
        raise TestingError(msg)
    path = path.resolve()
    if path.is_dir():
        from heronbridge.compat.projects import load_project

        resources = workdir / "resources"
        project = load_project(path, name, env, config, False, resources)
        project.install_resources(resources)
        return Loaded(project.plan, [resources, path], project)
    if env is not None:
        msg = f"topology file {str(path)!r}: env names a project's environment; expected none"
        raise TestingError(msg)
    from heronbridge.compat.heronpy.loader import imports_heronpy

    if imports_heronpy(path):
        from heronbridge.compat.heronpy.loader import load_file

        plan = load_file(path, name, config)
    else:
        from heronbridge.runtime.loader import load_topology_file

        plan = load_topology_file(path, name)
        plan.config.update(config)
    return Loaded(plan, [path.parent])


def load_sandboxed(stack: ExitStack, source: Any, name: str | None, env: str | None,
                   config: dict[str, Any] | None, workdir: str | Path | None) -> Loaded:
    """`load` in a Sandbox that `stack` closes (and in a temporary folder it removes,
    when no `workdir` is given)."""
    if workdir is None:
        workdir = stack.enter_context(tempfile.TemporaryDirectory(prefix="heronbridge-test-"))
    sandbox = stack.enter_context(Sandbox([Path(workdir)]))
    sandbox.hide(_provided(source))
    loaded = load(source, name, env, config, Path(workdir))
    for folder in loaded.folders:
        sandbox.add(folder)
    return loaded


def _provided(source: Any) -> set[str]:
    """The top-level module names a project folder's (or a topology file's folder's)
    modules take: an earlier import of the same names must not stand in for them."""
    if not isinstance(source, (str, os.PathLike)):
        return set()
    path = Path(source)
    folders = [path / "src", path / "topologies"] if path.is_dir() else [path.parent]
    return {entry.stem if entry.suffix == ".py" else entry.name
            for folder in folders if folder.is_dir() for entry in folder.iterdir()
            if entry.suffix == ".py" or (entry.is_dir() and entry.name.isidentifier())}


class Sandbox:
    """Saves what running components in this process changes, and puts it back: the
    working folder, the module path, the modules imported from the user's folders, and
    the logging set-up (pystorm adds its handlers to the root logger, and the in-process
    host moves the root's handlers aside)."""

    def __init__(self, folders: list[Path]) -> None:
        self.folders = [str(f) for f in folders]

    def __enter__(self) -> Sandbox:
        self.cwd = os.getcwd()
        self.path = list(sys.path)
        self.modules = set(sys.modules)
        self.hidden: dict[str, Any] = {}
        self.loggers = {name: _logger_state(logging.getLogger(name))
                        for name in ("", "heronbridge", "pystorm")}
        return self

    def add(self, folder: Path) -> None:
        self.folders.append(str(folder))

    def hide(self, names: set[str]) -> None:
        """Set aside the modules already imported under `names` (another project's
        `bolts`, say), so that the user's own are imported; they come back on exit."""
        self.hidden = {name: module for name, module in sys.modules.items()
                       if name.partition(".")[0] in names}
        for name in self.hidden:
            del sys.modules[name]

    def __exit__(self, *exc: object) -> None:
        os.chdir(self.cwd)
        sys.path[:] = self.path
        for name in set(sys.modules) - self.modules:
            file = getattr(sys.modules[name], "__file__", None) or ""
            if any(file.startswith(folder + os.sep) for folder in self.folders):
                del sys.modules[name]
        sys.modules.update(self.hidden)
        for name, (handlers, level, propagate) in self.loggers.items():
            logger = logging.getLogger(name)
            for handler in set(logger.handlers) - set(handlers):
                logger.removeHandler(handler)
                handler.close()
            logger.handlers[:] = handlers
            logger.setLevel(level)
            logger.propagate = propagate


def _logger_state(logger: logging.Logger) -> tuple[list[logging.Handler], int, bool]:
    return list(logger.handlers), logger.level, logger.propagate
