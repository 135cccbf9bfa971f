"""The topology's jar: the project's src/ under `resources/`, as `sparse run` packs it.

Storm's local supervisor extracts `resources/` from the first jar on the classpath that
has one, and runs every shell component there; so this jar goes first on the classpath
(flux-core has a `resources/` of its own).
"""

from __future__ import annotations

import zipfile
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from ..scenario import input_files
from .errors import StormError

RESOURCES = "resources"
SKIP_DIRS = {"__pycache__"}
SKIP_SUFFIXES = {".pyc", ".pyo"}


def build_resources_jar(source: Path, files: Mapping[str, Path], jar: Path) -> Path:
    """Write `jar` with `source` (src/) under resources/, then `files` ({src/-relative
    path: file}) laid over it."""
    entries: dict[str, Path] = {}
    if source.is_dir():
        for path in sorted(source.rglob("*")):
            rel = path.relative_to(source)
            if path.is_file() and not SKIP_DIRS & set(rel.parts) and \
                    path.suffix not in SKIP_SUFFIXES:
                entries[rel.as_posix()] = path
    entries.update(input_files(files, StormError))
    # Directory entries too: Storm looks the folder up as an entry of its own.
    dirs = {RESOURCES + "/"}
    for rel in entries:
        parts = PurePosixPath(rel).parts[:-1]
        dirs.update(f"{RESOURCES}/{'/'.join(parts[:i])}/" for i in range(1, len(parts) + 1))
    jar.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(jar, "w", zipfile.ZIP_DEFLATED) as z:
        for d in sorted(dirs):
            z.writestr(zipfile.ZipInfo(d), b"")
        for rel, path in sorted(entries.items()):
            z.write(path, f"{RESOURCES}/{rel}")
    return jar
