"""A topology's package: the files its containers need on a host that shares no
filesystem with the submitter, as one tar.gz.

It holds the project's src/ copy (`resources/`), every other folder on the plan's Python
path (`path-N/`), and a manifest naming the topology it belongs to and which of the
submitter's folders each copy stands for. A container unpacked elsewhere reads its plan
with those folders relocated (runtime.plan.relocate). The plan itself travels through the
state manager, and the topology's secret never enters the package.
"""

from __future__ import annotations

import io
import json
import logging
import os
import tarfile
from pathlib import Path

from ..errors import SchedulerError, where
from ..plan.logical import LogicalPlan
from ..plan.relocate import relocate_path
from .environments import TASK_PYTHON, ship

log = logging.getLogger("heronbridge.runtime.scheduler.package")

MANIFEST = "heronbridge-package.json"
ENVIRONMENT = "environment"  # the wheels of the topology's own virtualenv
# Not part of a project: caches, version control, virtual environments.
SKIP = frozenset({"__pycache__", ".git", ".hg", ".svn", ".tox", ".venv", "venv", ".nox",
                  "node_modules", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".pids"})
MAX_BYTES = 512 << 20


def folders_of(plan: LogicalPlan, workdir: Path) -> dict[str, str]:
    """{submitter's folder: its name in the package}: the resources folder, then each
    Python path folder not already inside one."""
    folders: dict[str, str] = {}
    resources = workdir / "resources"
    if resources.is_dir():
        folders[str(resources)] = "resources"
    for i, entry in enumerate(plan.python_path):
        inside = relocate_path(entry, tuple(folders.items())) != entry
        if not inside and Path(entry).is_dir():
            folders[entry] = f"path-{i}"
    return folders


def build(plan: LogicalPlan, topology_id: str, workdir: Path, target: Path) -> Path:
    """Write the package of a submitted topology to `target` (owner-only); returns it."""
    folders = folders_of(plan, workdir)
    total = 0

    def keep(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
        nonlocal total
        if Path(info.name).name in SKIP or info.name.endswith((".pyc", ".pyo")):
            return None
        total += info.size
        if total > MAX_BYTES:
            msg = (f"{where(plan.name)}: its package passed {MAX_BYTES >> 20} MiB at "
                   f"{info.name!r}; expected the project's code and data only (from "
                   f"{sorted(folders)})")
            raise SchedulerError(msg)
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        return info

    environment = None
    python = plan.config.get(TASK_PYTHON)
    if python:  # the topology's own virtualenv travels as wheels, installed offline there
        wheels = workdir / ENVIRONMENT
        environment = ship(python, wheels, where(plan.name), log.info)
        folders[str(wheels)] = ENVIRONMENT
    manifest = json.dumps({"topology": plan.name, "topology_id": topology_id,
                           "folders": folders, "environment": environment},
                          indent=1).encode()
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as raw, tarfile.open(fileobj=raw, mode="w:gz",
                                                  compresslevel=6) as tar:
        info = tarfile.TarInfo(MANIFEST)
        info.size = len(manifest)
        info.mode = 0o600
        tar.addfile(info, io.BytesIO(manifest))
        for source, name in folders.items():
            tar.add(source, name, filter=keep)
    return target


def environment_of(package: Path) -> dict | None:
    """What the package says of the topology's own virtualenv (its wheels are in
    ENVIRONMENT/), or None: its tasks run with heronbridge's interpreter."""
    try:
        return json.loads((package / MANIFEST).read_text()).get("environment")
    except (OSError, ValueError):
        return None


def relocations(package: Path, topology_id: str) -> list[tuple[str, str]]:
    """The [submitter's folder, copy here] pairs of an unpacked package, after checking
    that it is the package of the topology `topology_id`."""
    try:
        manifest = json.loads((package / MANIFEST).read_text())
    except (OSError, ValueError) as exc:
        msg = f"the topology package at {package} has no readable {MANIFEST}: {exc}"
        raise SchedulerError(msg) from exc
    if manifest.get("topology_id") != topology_id:
        msg = (f"{where(manifest.get('topology'))}: the package at {package} belongs to "
               f"{manifest.get('topology_id')!r}, expected {topology_id!r}")
        raise SchedulerError(msg)
    return [(source, str(package / name)) for source, name in manifest["folders"].items()]
