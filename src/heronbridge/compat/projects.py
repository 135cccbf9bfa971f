"""Loading a project in streamparse's layout, whichever API its topology is written in.

A streamparse project keeps its layout when its code moves to heronpy: config.json with
its environments, `topologies/NAME.py` (now defining a heronpy Topology subclass) and the
components in `src/`. These functions take the same arguments and return the same
`Project` as compat.streamparse's, and dispatch on what the topology module defines.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from . import streamparse
from .streamparse import Project, check_log_path, env_log_options, read_project


def load_project(path: str | Path, name: str | None = None, env: str | None = None,
                 options: dict[str, Any] | None = None, multilang: bool = False,
                 resources: Path | None = None, python: str | None = None,
                 java_jars: Path | None = None) -> Project:
    """Read the project at `path` (see compat.streamparse.load_project). A topology module
    that imports heronpy and defines a heronpy Topology is loaded as heronpy; any other,
    as streamparse."""
    files = read_project(path, name, env)
    from .heronpy.loader import imports_heronpy

    if imports_heronpy(files.topology_file):
        if multilang:
            from .heronpy import HeronpyError

            msg = (f"topology {files.name!r}: --multilang runs streamparse components as "
                   "subprocesses; heronpy components run in their tasks' processes, "
                   "expected no --multilang")
            raise HeronpyError(msg)
        from .heronpy.loader import load_project as load_heronpy

        project = load_heronpy(files, options, resources, python)
        if project is not None:
            # The env's log settings, under everything else, as for streamparse: the host
            # gives each component's logger its file (shims.heronpy.host).
            for key, value in env_log_options(files.env_config).items():
                project.plan.config.setdefault(key, value)
                project.options.setdefault(key, value)
            check_log_path(project.plan, resources.parent if resources is not None else None)
            return project
    return streamparse.load_project(path, files.name, env, options, multilang, resources,
                                    python, java_jars)


def topology_name(path: str | Path, name: str | None = None) -> str:
    """The name of the topology `load_project` would load: its file's stem, as sparse
    names it, whichever API it is written in."""
    return streamparse.topology_name(path, name)
