"""Running the rules over a tree: gather files, index them, rewrite each in a pool.

Only modules that define components or topologies, or import streamparse, pystorm or
storm.py, are parsed by libcst; the rest are read once (by `ast`, for the index) and left
alone. Files are read and written as bytes, so encoding and newlines stay as they were.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import libcst as cst
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor, ImportItem

from . import MigrateError
from .analysis import Index, build_index
from .hierarchy import plan_of
from .rule import CONVERTED, TODO, Entry, Import
from .rules import select

SKIPPED_DIRS = {".git", ".hg", ".svn", ".tox", ".venv", "venv", "__pycache__", "node_modules",
                ".mypy_cache", ".pytest_cache", ".ruff_cache", "build", "dist"}
CHANGED, UNCHANGED, FAILED = "changed", "unchanged", "failed"


@dataclass
class FileResult:
    path: str
    status: str  # CHANGED, UNCHANGED or FAILED
    lines: int = 0
    entries: list[Entry] = field(default_factory=list)
    diff: bytes = b""
    error: str = ""


@dataclass
class Outcome:
    root: Path
    files: list[FileResult]

    @property
    def changed(self) -> list[FileResult]:
        return [f for f in self.files if f.status == CHANGED]

    @property
    def failed(self) -> list[FileResult]:
        return [f for f in self.files if f.status == FAILED]

    @property
    def entries(self) -> list[Entry]:
        return [e for f in self.files for e in f.entries]

    @property
    def todos(self) -> list[Entry]:
        return [e for e in self.entries if e.status == TODO]

    @property
    def lines(self) -> int:
        return sum(f.lines for f in self.files)

    @property
    def refusing(self) -> list[str]:
        """The classes marked @unported: a topology using one refuses to run."""
        return sorted({e.refuses for e in self.entries if e.refuses})

    def summary(self) -> dict[str, Any]:
        """Counts; what was rewritten (each changed file compiled) apart from what was
        marked, by rule; and the classes that now refuse to run."""
        by_rule: dict[str, dict[str, int]] = {CONVERTED: {}, TODO: {}}
        for entry in self.entries:
            counts = by_rule[entry.status]
            counts[entry.rule] = counts.get(entry.rule, 0) + 1
        return {"files": len(self.files), "changed": len(self.changed),
                "unchanged": len(self.files) - len(self.changed) - len(self.failed),
                "failed": len(self.failed), "lines": self.lines,
                "converted": len(self.entries) - len(self.todos), "todo": len(self.todos),
                "rewritten": dict(sorted(by_rule[CONVERTED].items())),
                "marked": dict(sorted(by_rule[TODO].items())),
                "refusing": self.refusing}


def gather(path: Path) -> Iterator[Path]:
    if path.is_file():
        yield path
        return
    for folder, dirs, files in os.walk(path):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and not d.endswith(".egg-info"))
        for name in sorted(files):
            if name.endswith(".py"):
                yield Path(folder) / name


def migrate_source(source: bytes, path: str, index: Index,
                   rule_ids: list[str] | None = None) -> tuple[bytes, list[Entry]]:
    """One module's new bytes and what the rules did to it. Raises MigrateError if the
    new code does not compile (a rule's bug: the file is then left as it was)."""
    module_info = index.modules[path]
    tree = cst.parse_module(source)
    entries: list[Entry] = []
    warnings: list[str] = []
    imports: set[Import] = set()
    for rule in select(rule_ids):
        if rule.applies(index, module_info):
            tree = rule.run(tree, index, module_info, entries, warnings, imports)
    if imports:  # after the existing imports, merged into a `from` line already there
        items = [ImportItem(module, name) for module, name in sorted(
            imports, key=lambda i: (i[0], i[1] or ""))]
        tree = AddImportsVisitor(CodemodContext(), items).transform_module(tree)
    new = tree.bytes
    if new != source:
        try:
            compile(new, path, "exec", dont_inherit=True)
        except (SyntaxError, ValueError) as exc:
            msg = f"the rewritten code does not compile ({exc}); the file is left as it was"
            raise MigrateError(msg) from exc
    return new, entries


def _needs_rewrite(index: Index, path: str, rule_ids: list[str] | None) -> bool:
    module = index.modules[path]
    return any(rule.applies(index, module) for rule in select(rule_ids))


# Worker state: the index is built once and handed to each worker at start.
_INDEX: Index | None = None
_RULES: list[str] | None = None


def _init(index: Index, rule_ids: list[str] | None) -> None:
    global _INDEX, _RULES
    _INDEX, _RULES = index, rule_ids


def _one(task: tuple[str, bytes, str | None]) -> tuple[FileResult, bytes]:
    path, source, diff_as = task  # diff_as: the path the diff names, when one is wanted
    lines = source.count(b"\n")
    if _INDEX is None:
        msg = f"{path}: the worker was given no index of the project"
        raise MigrateError(msg)
    try:
        new, entries = migrate_source(source, path, _INDEX, _RULES)
    except cst.ParserSyntaxError as exc:
        return FileResult(path, FAILED, lines, error=f"does not parse: {exc}"), source
    except Exception as exc:  # a rule's bug must not stop the other files
        return FileResult(path, FAILED, lines,
                          error=f"{type(exc).__name__}: {exc}"), source
    result = FileResult(path, CHANGED if new != source else UNCHANGED, lines, entries)
    if diff_as is not None and new != source:
        result.diff = unified_diff(diff_as, source, new)
    return result, new


def unified_diff(path: str, old: bytes, new: bytes) -> bytes:
    """A diff `git apply` and `patch -p1` take: `a/PATH` and `b/PATH`, PATH relative to
    the folder migrated, and a last line without a newline marked as `diff -u` marks
    it. Bytes in, bytes out: any encoding and line ending survives."""
    a = old.decode("utf-8", "surrogateescape").splitlines(keepends=True)
    b = new.decode("utf-8", "surrogateescape").splitlines(keepends=True)
    lines = difflib.unified_diff(a, b, f"a/{path}", f"b/{path}")
    text = "".join(line if line.endswith(("\n", "\r")) else
                   line + "\n\\ No newline at end of file\n" for line in lines)
    return text.encode("utf-8", "surrogateescape")


def migrate(path: str | Path, *, write: bool = True, diff: bool = False,
            rule_ids: list[str] | None = None, jobs: int | None = None) -> Outcome:
    """Migrate every Python file under `path` (or that one file); with `write` False
    nothing is written. Files that fail are reported in the outcome, not raised."""
    root = Path(path).resolve()
    if not root.exists():
        msg = f"nothing to migrate at {str(path)!r}: no such file or folder"
        raise MigrateError(msg)
    select(rule_ids)  # an unknown rule fails before any work
    files = list(gather(root))
    sources = {str(f): f.read_bytes() for f in files}
    index, broken = build_index(
        [(Path(p), s.decode("utf-8", "replace")) for p, s in sources.items()],
        root.parent if root.is_file() else root)
    plan_of(index.prepare())  # before the workers get a copy of the index
    results: dict[str, FileResult] = {
        p: FileResult(p, FAILED, sources[p].count(b"\n"), error=f"does not parse: {why}")
        for p, why in broken.items()}
    base = root.parent if root.is_file() else root  # diffs name paths from here
    tasks = [(p, s, Path(p).relative_to(base).as_posix() if diff else None)
             for p, s in sources.items()
             if p not in broken and _needs_rewrite(index, p, rule_ids)]
    queued = {t[0] for t in tasks}
    for p, s in sources.items():
        if p not in broken and p not in queued:
            results[p] = FileResult(p, UNCHANGED, s.count(b"\n"))
    for result, new in _run(tasks, index, rule_ids, jobs):
        results[result.path] = result
        if write and result.status == CHANGED:
            Path(result.path).write_bytes(new)
    return Outcome(root, [results[str(f)] for f in files])


def _run(tasks: list[tuple[str, bytes, str | None]], index: Index, rule_ids: list[str] | None,
         jobs: int | None) -> Iterator[tuple[FileResult, bytes]]:
    jobs = jobs or os.cpu_count() or 1
    if jobs == 1 or len(tasks) < 2:
        _init(index, rule_ids)
        yield from map(_one, tasks)
        return
    with ProcessPoolExecutor(max_workers=jobs, initializer=_init,
                             initargs=(index, rule_ids)) as pool:
        yield from pool.map(_one, tasks, chunksize=max(1, min(16, len(tasks) // (jobs * 4))))
