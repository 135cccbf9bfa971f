"""A topology's requirements file as pip and uv read it: its lines, numbered; the
distribution each line names, in whatever form it names it; what resolving them would
install (read from `uv pip compile`, before anything is installed); and which of those
a task process imports from heronbridge's own environment, where a version heronbridge
does not accept would break the task.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass

# What a task process imports from heronbridge's environment (tests/runtime/
# test_task_imports.py measures it): heronbridge; the runtime's frames, values and
# control messages (protobuf, msgspec, msgpack); the Storm host's pystorm and streamparse,
# with what `import streamparse` imports; the heronpy host's heronpy and cloudpickle. A
# project's own pins of anything else (kazoo, rich, ...) cannot break its tasks: only
# these are judged.
TASK_DISTRIBUTIONS = frozenset({
    "heronbridge", "protobuf", "msgspec", "msgpack",
    "streamparse", "pystorm", "thriftpy2", "ply", "ijson", "simplejson", "six",
    "heronpy", "cloudpickle",
})
_ARCHIVES = (".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".zip", ".whl", ".tar")
_EGG = re.compile(r"[#&]egg=([A-Za-z0-9][A-Za-z0-9._-]*)")
_VERSIONED = re.compile(r"^(.+?)-\d[^/]*$")  # an archive's or a folder's name-version


@dataclass(frozen=True)
class Pin:
    """A distribution resolving would install: its version ("" for a URL's), and what
    asked for it (a requirement's name, or "-r FILE" for the file itself)."""

    name: str
    version: str
    via: tuple[str, ...] = ()


def lines(text: str) -> list[tuple[int, str]]:
    """A requirements file's lines that say something, each with its number (a
    continued line's first): comments, blanks and continuations as pip reads them."""
    out: list[tuple[int, str]] = []
    joined, first = "", 0
    for number, raw in enumerate(text.splitlines(), start=1):
        if not joined:
            first = number
        if raw.endswith("\\"):
            joined += raw[:-1]
            continue
        whole, joined = joined + raw, ""
        line = "" if whole.lstrip().startswith("#") else whole.split(" #", 1)[0].strip()
        if line:
            out.append((first, line))
    if joined.strip() and not joined.lstrip().startswith("#"):
        out.append((first, joined.split(" #", 1)[0].strip()))
    return out


def name_of(line: str) -> str | None:
    """The distribution (canonical name) a requirement line asks for, however it names
    it: `NAME[extras] <versions> ; markers`, `NAME @ URL`, a VCS or archive URL (its
    `#egg=`, else the URL's last part), a folder or an archive, each with or without
    `-e`; None for an option line, or one that names nothing readable."""
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    text = line.strip()
    for flag in ("-e ", "--editable ", "--editable="):
        if text.startswith(flag):
            text = text[len(flag):].strip()
            break
    else:
        if text.startswith("-"):
            return None
    text = re.split(r"\s+--?[A-Za-z]", text, maxsplit=1)[0]  # per-requirement options
    egg = _EGG.search(text)
    if egg is not None:
        return canonicalize_name(_VERSIONED.sub(r"\1", egg.group(1)))
    located = "://" in text or "/" in text or "\\" in text or text.startswith(".") or \
        text.lower().endswith(_ARCHIVES)
    if not located:
        try:
            return canonicalize_name(Requirement(text).name)
        except InvalidRequirement:
            return None
    if " @ " in text or re.match(r"^[A-Za-z0-9._-]+(\[[^\]]*\])?\s*@", text):
        try:
            return canonicalize_name(Requirement(text).name)
        except InvalidRequirement:
            pass
    path = re.sub(r"^[A-Za-z0-9+.-]+://", "", text).split("#", 1)[0].split("?", 1)[0]
    parts = re.split(r"[/\\]", path.rstrip("/\\"))
    for marker in ("archive", "tarball", "zipball"):  # a forge's archive of a revision
        if marker in parts[1:]:
            parts = parts[:parts.index(marker, 1)]
            break
    last = parts[-1]
    last = last.split("@", 1)[0]  # a VCS revision
    for suffix in (".git", *_ARCHIVES):
        if last.lower().endswith(suffix):
            last = last[:-len(suffix)]
            break
    name = _VERSIONED.sub(r"\1", last)
    return canonicalize_name(name) if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name) \
        else None


def provided(line: str) -> str | None:
    """The version heronbridge's environment has of what requirement `line` asks for,
    when it satisfies it (the line needs no install), else None. Lines that are not a
    plain requirement (options, URLs, paths, extras) always need the installer."""
    from importlib import metadata

    from packaging.requirements import InvalidRequirement, Requirement

    if line.startswith("-") or "://" in line or "/" in line or line.startswith("."):
        return None
    try:
        req = Requirement(line)
    except InvalidRequirement:
        return None
    if req.url or req.extras:
        return None
    if req.marker is not None and not req.marker.evaluate():
        return "(not for this platform)"
    try:
        version = metadata.version(req.name)
    except metadata.PackageNotFoundError:
        return None
    return version if req.specifier.contains(version, prereleases=True) else None


def compiled(text: str) -> list[Pin]:
    """The pins `uv pip compile` printed (with its `# via` annotations)."""
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    pins: list[Pin] = []
    name, version = "", ""
    via: list[str] = []

    def close() -> None:
        if name:
            pins.append(Pin(name, version, tuple(via)))

    for raw in text.splitlines():
        stripped = raw.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            said = stripped.lstrip("#").strip()
            said = said.removeprefix("via").strip()
            if name and said:
                via.append(said)
            continue
        if raw[0].isspace() or stripped.startswith("-"):
            continue
        close()
        try:
            req = Requirement(stripped.split(" --hash", 1)[0].rstrip(" \\"))
        except InvalidRequirement:
            name = ""
            continue
        pinned = [s.version for s in req.specifier if s.operator in ("==", "===")]
        name, version, via = canonicalize_name(req.name), pinned[0] if pinned else "", []
    close()
    return pins


@functools.cache
def runtime_requirements() -> dict[str, tuple[tuple[str, str], ...]]:
    """{distribution: ((specifier, required by), ...)} for heronbridge and everything it
    needs, transitively (no extras)."""
    from importlib import metadata

    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    out: dict[str, list[tuple[str, str]]] = {"heronbridge": []}
    todo = ["heronbridge"]
    while todo:
        parent = todo.pop()
        try:
            requires = metadata.distribution(parent).requires or []
        except metadata.PackageNotFoundError:
            continue
        for text in requires:
            try:
                req = Requirement(text)
            except InvalidRequirement:
                continue
            if req.marker is not None and not req.marker.evaluate({"extra": ""}):
                continue
            name = canonicalize_name(req.name)
            if name not in out:
                out[name] = []
                todo.append(name)
            out[name].append((str(req.specifier), parent))
    return {name: tuple(reqs) for name, reqs in out.items()}


def breaking(name: str, version: str) -> list[str]:
    """Why `version` of `name` in a topology's environment would break its tasks (each
    requirement of heronbridge's it fails), or [] when the tasks do not import it or
    heronbridge accepts it."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.utils import canonicalize_name

    name = canonicalize_name(name)
    if name not in TASK_DISTRIBUTIONS or not version:
        return []
    if name == "heronbridge":
        return ["the tasks must import the heronbridge that runs them"]
    found = []
    for specifier, parent in runtime_requirements().get(name, ()):
        try:
            ok = SpecifierSet(specifier).contains(version, prereleases=True)
        except InvalidSpecifier:
            continue
        if not ok:
            found.append(f"heronbridge's dependency {parent} needs {name}{specifier}"
                         if parent != "heronbridge" else f"heronbridge needs {name}{specifier}")
    return found


def culprits(numbered: Iterable[tuple[int, str]], output: str) -> list[tuple[int, str]]:
    """The lines an installer's failure `output` is about: those it quotes, else those
    whose distribution it names."""
    numbered = list(numbered)
    quoted = [(n, line) for n, line in numbered if line in output]
    if quoted:
        return quoted
    lowered = re.sub(r"[-_.]+", "-", output.lower())
    named = []
    for n, line in numbered:
        name = name_of(line)
        if name and re.search(rf"(?<![a-z0-9-]){re.escape(name)}(?![a-z0-9])", lowered):
            named.append((n, line))
    return named
