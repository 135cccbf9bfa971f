"""A topology's own Python environment: the virtualenv its Python tasks run in.

An environment is built once per (requirements, interpreter, flags) and cached, by a
hash of those, in a folder owned by the user alone (0700): `<cache>/<key>/` is the
virtualenv itself, and its marker file (written last) says that it is complete. A
build takes the entry's lock, so that two runs never build the same one at once; a
build that fails removes everything it made, and a folder without its marker (a
build that was killed) is removed, saying so, before it is built again. An entry that
is not the user's own is never used.

The tasks import heronbridge and what it needs from heronbridge's own environment: a
`.pth` file in the virtualenv appends that environment's folders after the
virtualenv's own, so a package the user pins there wins over ours. Where such a pin
breaks what the tasks need (a version outside heronbridge's requirement), the build is
refused, naming the package and the requirement, before anything starts.

For hosts that share no filesystem with the submitter (the Spark scheduler), the
environment travels as a wheelhouse (`wheelhouse()`), installed on each host with no
package index (`install_offline()`) into that host's own cache.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import SchedulerError
from . import requirements as reqs

# The plan's (topology-level) config key naming the interpreter its tasks run with.
TASK_PYTHON = "heronbridge.task.python"
MARKER = "heronbridge-environment.json"
REQUIREMENTS = "heronbridge-requirements.txt"  # what was installed, as the installer read it
PTH = "_heronbridge_runtime.pth"
OUTPUT_TAIL = 12  # lines of a failed installer's output an error quotes
INDEX_OPTIONS = ("--index-url", "-i", "--extra-index-url", "--find-links", "-f", "--no-index")

Progress = Callable[[str], None]


class EnvironmentBuildError(SchedulerError):
    """A topology's environment could not be built, found or trusted."""


@dataclass(frozen=True)
class Interpreter:
    """A Python interpreter, as far as an environment's compatibility goes."""

    path: str
    version: str  # "3.11.7"
    tag: str  # implementation, version and ABI: "cpython-311-x86_64-linux-gnu"
    platform: str  # sysconfig's: "linux-x86_64"

    @property
    def short(self) -> str:
        return ".".join(self.version.split(".")[:2])

    def describe(self) -> str:
        return f"{self.path} (Python {self.version}, {self.tag})"


_PROBE = ("import json, platform, sys, sysconfig; print(json.dumps({'version': "
          "platform.python_version(), 'tag': sysconfig.get_config_var('SOABI') or "
          "sys.implementation.cache_tag, 'platform': sysconfig.get_platform()}))")


def this_interpreter() -> Interpreter:
    """The interpreter heronbridge runs with (its tasks' by default)."""
    import platform

    return Interpreter(sys.executable, platform.python_version(),
                       sysconfig.get_config_var("SOABI") or sys.implementation.cache_tag,
                       sysconfig.get_platform())


def probe_interpreter(path: str) -> Interpreter | None:
    """The interpreter at `path` (a file, or a name on $PATH); None when there is none."""
    found = shutil.which(path) or (path if os.path.isfile(path) else None)
    if found is None:
        return None
    try:
        done = subprocess.run([found, "-c", _PROBE], capture_output=True, text=True,
                              timeout=60, check=True)
        info = json.loads(done.stdout)
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    return Interpreter(found, info["version"], info["tag"], info["platform"])


def mismatch(interpreter: Interpreter) -> str | None:
    """Why tasks cannot run with `interpreter` (they import heronbridge and its compiled
    packages from this interpreter's environment), or None."""
    ours = this_interpreter()
    if (interpreter.tag, interpreter.platform) == (ours.tag, ours.platform):
        return None
    return (f"{interpreter.describe()}, but heronbridge and its compiled packages are "
            f"installed for Python {ours.short} ({ours.tag}, {ours.platform}); expected an "
            f"interpreter of that version")


@dataclass(frozen=True)
class Spec:
    """What to build: `requirements` are pip requirement lines; `where` and `source` name
    the topology and the file they came from, `lines` each requirement's line number
    there and `without` how to run the topology without its environment (for
    messages); `folder` is where relative paths in them start."""

    where: str
    source: str
    requirements: tuple[str, ...]
    interpreter: Interpreter
    flags: tuple[str, ...] = ()
    folder: str = "."
    lines: tuple[int, ...] = ()
    without: str = ""

    @property
    def key(self) -> str:
        import hashlib

        text = json.dumps({"requirements": list(self.requirements),
                           "interpreter": [self.interpreter.version, self.interpreter.tag,
                                           self.interpreter.platform,
                                           os.path.realpath(self.interpreter.path)],
                           "flags": list(self.flags)}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:24]


@dataclass(frozen=True)
class Environment:
    """A built (or reused) environment: `python` runs the topology's tasks."""

    key: str
    root: Path
    built: bool  # False: reused from the cache
    seconds: float

    @property
    def python(self) -> str:
        return str(self.root / "bin" / "python")


# -- heronbridge's own requirements ---------------------------------------------------

def runtime_version() -> str:
    from importlib import metadata

    try:
        return metadata.version("heronbridge")
    except metadata.PackageNotFoundError:
        return "(unknown version)"


def conflicts(site: Path) -> list[str]:
    """What the environment's own packages (in `site`) would shadow of what a task
    imports from heronbridge's, at a version heronbridge does not accept; each named
    with why."""
    from importlib import metadata

    return sorted({_conflict(dist.metadata["Name"] or "", dist.version, ())
                   for dist in metadata.distributions(path=[str(site)])} - {""})


def _conflict(name: str, version: str, via: tuple[str, ...]) -> str:
    """`name version (why it breaks the tasks; what asked for it)`, or "" when it does not."""
    why = reqs.breaking(name, version)
    if not why:
        return ""
    asked = [v for v in via if not v.startswith("-r ")]
    by = f"; required by {', '.join(asked)}" if asked else ""
    return f"{name} {version} (the tasks run heronbridge: {'; '.join(why)}{by})"


# -- the cache ---------------------------------------------------------------------------

def _own_folder(path: Path, what: str) -> None:
    """`path` exists (made if missing, 0700), is a real folder, and is this user's alone."""
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = path.lstat()
    except OSError as exc:
        msg = f"cannot make {what} {path}: {exc}"
        raise EnvironmentBuildError(msg) from exc
    import stat

    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        msg = (f"{what} {path} is {'not a folder' if not stat.S_ISDIR(info.st_mode) else ''}"
               f"{'' if info.st_uid == os.getuid() else f'owned by uid {info.st_uid}'}, not "
               f"this user's ({os.getuid()}): not trusted; remove it or choose another home")
        raise EnvironmentBuildError(msg)
    if info.st_mode & 0o077:
        os.chmod(path, 0o700)


def _trusted(path: Path) -> str | None:
    """Why an existing cache entry (or file in one) cannot be trusted, or None."""
    import stat

    try:
        info = path.lstat()
    except FileNotFoundError:
        return "missing"
    if stat.S_ISLNK(info.st_mode):
        return "a symbolic link"
    if info.st_uid != os.getuid():
        return f"owned by uid {info.st_uid}, not this user ({os.getuid()})"
    if info.st_mode & 0o022:
        return f"writable by others (mode {stat.S_IMODE(info.st_mode):o})"
    return None


def site_packages(root: Path) -> Path:
    found = sorted(root.glob("lib/python*/site-packages"))
    if not found:
        msg = f"the virtualenv {root} has no lib/pythonX.Y/site-packages"
        raise EnvironmentBuildError(msg)
    return found[0]


def runtime_path() -> list[str]:
    """The folders a new process of heronbridge's interpreter imports from (its own
    environment, with heronbridge), which the virtualenv appends after its own."""
    try:
        done = subprocess.run([sys.executable, "-P", "-c", "import json, sys; "
                               "print(json.dumps(sys.path))"], capture_output=True,
                              text=True, timeout=60, check=True, cwd="/")
        return [p for p in json.loads(done.stdout) if p]
    except (OSError, subprocess.SubprocessError, ValueError):
        return [p for p in sys.path if p and p != os.getcwd()]


def write_pth(root: Path) -> None:
    """Make heronbridge and its environment importable in the virtualenv, after its own
    packages (site.addsitedir also reads that environment's .pth files, e.g. an editable
    install's)."""
    site = site_packages(root)
    # One line, run by site.addpackage's exec: no comprehension (its scope would not see
    # `site`).
    text = f"import site; list(map(site.addsitedir, {json.dumps(runtime_path())}))\n"
    tmp = site / f".{PTH}.{os.getpid()}"
    tmp.write_text(text)
    os.replace(tmp, site / PTH)


def find_uv() -> str | None:
    try:
        from uv import find_uv_bin
    except ImportError:
        return shutil.which("uv")
    try:
        return find_uv_bin()
    except FileNotFoundError:
        return shutil.which("uv")


class Cache:
    """Environments under `root` (a folder of the user's own home), by key."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def entry(self, key: str) -> Path:
        return self.root / key

    @contextlib.contextmanager
    def locked(self, key: str, spec_where: str, progress: Progress) -> Iterator[None]:
        _own_folder(self.root, "the virtualenv cache")
        path = self.root / f"{key}.lock"
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                progress(f"{spec_where}: waiting for another run building the same "
                         f"environment ({self.entry(key)})")
                fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # releases the lock

    def reusable(self, key: str) -> tuple[bool, str]:
        """Whether the entry `key` is complete and trusted; else why not ("" if absent)."""
        root = self.entry(key)
        if not os.path.lexists(root):
            return False, ""
        for path in (root, root / MARKER, root / "bin" / "python"):
            why = _trusted(path) if path.name != "python" else (
                None if os.path.exists(path) else "missing")
            if why == "missing":
                return False, f"{path.name if path != root else root} is missing (an " \
                              "interrupted build)"
            if why is not None:
                msg = (f"the cached environment {root} is not trusted: {path} is {why}; "
                       "remove it, or choose another home")
                raise EnvironmentBuildError(msg)
        try:
            marker = json.loads((root / MARKER).read_text())
        except (OSError, ValueError):
            return False, f"its {MARKER} is unreadable"
        if marker.get("key") != key:
            return False, f"its {MARKER} names another environment ({marker.get('key')!r})"
        return True, ""

    def ensure(self, spec: Spec, progress: Progress, rebuild: bool = False) -> Environment:
        """The environment of `spec`: reused when cached, else built (saying so)."""
        key = spec.key
        root = self.entry(key)
        began = time.monotonic()
        with self.locked(key, spec.where, progress):
            ok, why = self.reusable(key)
            if ok and not rebuild:
                write_pth(root)  # this heronbridge's environment, wherever it is now
                _refuse_conflicts(spec, root)
                return Environment(key, root, False, time.monotonic() - began)
            if os.path.lexists(root):
                progress(f"{spec.where}: removing {root} before building it again ("
                         f"{'asked to rebuild' if ok else why})")
                shutil.rmtree(root)
            build(spec, root, progress)
        return Environment(key, root, True, time.monotonic() - began)

    def install_offline(self, spec: Spec, wheels: Path, progress: Progress) -> Environment:
        """The environment of `spec` from the wheels in `wheels` alone (no package index):
        how a host that did not build it gets it."""
        key = spec.key
        root = self.entry(key)
        began = time.monotonic()
        with self.locked(key, spec.where, progress):
            ok, why = self.reusable(key)
            if ok:
                write_pth(root)
                _refuse_conflicts(spec, root)
                progress(f"{spec.where}: reusing its virtualenv {root}, installed here before")
                return Environment(key, root, False, time.monotonic() - began)
            if os.path.lexists(root):
                progress(f"{spec.where}: removing {root} before installing it again ({why})")
                shutil.rmtree(root)
            build(spec, root, progress, wheels=wheels)
        return Environment(key, root, True, time.monotonic() - began)


def _refuse_conflicts(spec: Spec, root: Path) -> None:
    found = conflicts(site_packages(root))
    if found:
        _refuse(spec, found)


def _refuse(spec: Spec, found: list[str]) -> None:
    msg = (f"{spec.where}: {spec.source} installs what would break its tasks: "
           f"{'; '.join(found)}; expected versions heronbridge accepts: change the pin or "
           "the requirement that asks for it, or drop it (heronbridge's own are importable "
           "in the virtualenv)" + _without(spec))
    raise EnvironmentBuildError(msg)


def _without(spec: Spec) -> str:
    return f"; {spec.without}" if spec.without else ""


def _about(spec: Spec, output: str) -> str:
    """`line 4, `git+...`: ` for the lines of the file an installer's output is about."""
    if not spec.lines:
        return ""
    found = reqs.culprits(zip(spec.lines, spec.requirements, strict=True), output)
    if not found:
        return ""
    said = "; ".join(f"line {n}, `{line}`" for n, line in found)
    return f"{said}: "


def _venv_command(spec: Spec, root: Path, uv: str | None) -> list[str]:
    if uv is not None:
        return [uv, "venv", "--no-config", "--python", spec.interpreter.path, *spec.flags,
                str(root)]
    return [spec.interpreter.path, "-m", "venv", *spec.flags, str(root)]


def _install_command(spec: Spec, root: Path, uv: str | None, requirements: Path,
                     wheels: Path | None) -> list[str]:
    offline = ["--no-index", "--find-links", str(wheels)] if wheels is not None else []
    if uv is not None:
        return [uv, "pip", "install", "--no-config", "--python", str(root / "bin" / "python"),
                *(["--offline"] if wheels is not None else []), *offline, "-r",
                str(requirements)]
    return [str(root / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check",
            "--progress-bar", "off", *offline, "-r", str(requirements)]


def _installer_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "CONDA_PREFIX")}
    env.update(NO_COLOR="1", PIP_NO_INPUT="1")
    return env


def _run(command: list[str], cwd: str, progress: Progress) -> tuple[int, list[str]]:
    """Run an installer step, its output printed line by line as it comes."""
    lines: list[str] = []
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          stdin=subprocess.DEVNULL, cwd=cwd, env=_installer_env(), text=True,
                          errors="replace") as proc:
        assert proc.stdout is not None  # noqa: S101 - a pipe was asked for
        for raw in proc.stdout:
            line = raw.rstrip()
            if line and not line.startswith("Activate with"):  # uv venv's hint: not ours
                lines.append(line)
                progress(f"  {line}")
    return proc.returncode, lines


def _judge(spec: Spec, root: Path, uv: str, requirements: Path, progress: Progress) -> None:
    """Resolve the requirements (`uv pip compile`: what the install would put in the
    virtualenv, nothing installed) and refuse, before the install, what cannot be built
    or would break the tasks. (pip has no resolution to read: without uv, only the
    installed environment is judged.)"""
    done = subprocess.run([uv, "pip", "compile", "--no-config", "--no-header", "--python",
                           str(root / "bin" / "python"), str(requirements)],
                          capture_output=True, stdin=subprocess.DEVNULL, cwd=spec.folder,
                          env=_installer_env(), text=True, errors="replace", check=False)
    said = [line.rstrip() for line in done.stderr.splitlines() if line.strip()]
    if done.returncode != 0:
        msg = (f"{spec.where}: {spec.source} cannot be installed: "
               f"{_about(spec, done.stderr)}{' / '.join(said[-OUTPUT_TAIL:])}{_without(spec)}")
        raise EnvironmentBuildError(msg)
    for line in said:
        progress(f"  {line}")
    found = sorted({_conflict(p.name, p.version, p.via) for p in reqs.compiled(done.stdout)}
                   - {""})
    if found:
        _refuse(spec, found)


def build(spec: Spec, root: Path, progress: Progress, wheels: Path | None = None) -> None:
    """Build the virtualenv of `spec` at `root` (absent), from an index or, with `wheels`,
    from those wheels alone; on any failure nothing of it is left."""
    uv = find_uv()
    tool = "uv" if uv is not None else "pip"
    source = f"the wheels shipped with it ({wheels})" if wheels is not None else spec.source
    progress(f"{spec.where}: building its virtualenv from {source} with {tool} "
             f"(Python {spec.interpreter.version}) in {root}")
    began = time.monotonic()
    try:
        code, lines = _run(_venv_command(spec, root, uv), spec.folder, progress)
        if code != 0:
            msg = (f"{spec.where}: cannot create its virtualenv with {spec.interpreter.describe()}"
                   f" and flags {list(spec.flags)}: " + " / ".join(lines[-OUTPUT_TAIL:]))
            raise EnvironmentBuildError(msg)
        os.chmod(root, 0o700)
        requirements = root / REQUIREMENTS
        requirements.write_text("".join(f"{line}\n" for line in spec.requirements))
        if uv is not None and wheels is None:  # shipped wheels were judged where built
            _judge(spec, root, uv, requirements, progress)
        code, lines = _run(_install_command(spec, root, uv, requirements, wheels),
                           spec.folder, progress)
        if code != 0:
            tail = " / ".join(lines[-OUTPUT_TAIL:])
            if wheels is not None:
                msg = (f"{spec.where}: {spec.source} cannot be installed from the wheels "
                       f"shipped with it ({wheels}; built where it was submitted, for "
                       f"{spec.interpreter.platform}): {tail}")
            else:
                msg = (f"{spec.where}: {spec.source} cannot be installed: "
                       f"{_about(spec, chr(10).join(lines))}{tail}{_without(spec)}")
            raise EnvironmentBuildError(msg)
        write_pth(root)
        _refuse_conflicts(spec, root)
        marker = {"key": spec.key, "requirements": list(spec.requirements),
                  "source": spec.source, "where": spec.where,
                  "interpreter": {"path": spec.interpreter.path,
                                  "version": spec.interpreter.version,
                                  "tag": spec.interpreter.tag,
                                  "platform": spec.interpreter.platform},
                  "flags": list(spec.flags), "tool": tool, "built": time.time()}
        tmp = root / f".{MARKER}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(json.dumps(marker, indent=1))
        os.replace(tmp, root / MARKER)  # last: the entry is complete
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise
    progress(f"{spec.where}: built its virtualenv in {time.monotonic() - began:.1f}s")


# -- shipping ------------------------------------------------------------------------------

def frozen(root: Path) -> list[str]:
    """`name==version` of every distribution installed in the virtualenv itself."""
    from importlib import metadata

    return sorted({f"{d.metadata['Name']}=={d.version}"
                   for d in metadata.distributions(path=[str(site_packages(root))])
                   if d.metadata["Name"]})


def wheelhouse(env: Environment, target: Path, where: str, progress: Progress) -> list[str]:
    """Wheels of everything the environment installed, into `target`; returns the pinned
    requirement lines a host installs from them with no package index."""
    pins = frozen(env.root)
    target.mkdir(mode=0o700, parents=True, exist_ok=True)
    if not pins:
        return pins
    # Where the pins come from, as the requirements said (an index, local wheels).
    sources = [line for line in marker_of(env.root).get("requirements", [])
               if line.split()[0].split("=")[0] in INDEX_OPTIONS]
    requirements = target / "requirements.txt"
    requirements.write_text("".join(f"{p}\n" for p in [*sources, *pins]))
    progress(f"{where}: collecting the wheels of its virtualenv ({len(pins)} packages) to "
             "ship with it")
    code, lines = _run([sys.executable, "-m", "pip", "wheel", "--disable-pip-version-check",
                        "--progress-bar", "off", "--no-deps", "-w", str(target), "-r",
                        str(requirements)], str(target), lambda _line: None)
    requirements.unlink()
    if code != 0:
        msg = f"{where}: cannot collect the wheels of {pins}: " + " / ".join(lines[-OUTPUT_TAIL:])
        raise EnvironmentBuildError(msg)
    return pins


def marker_of(root: Path) -> dict[str, Any]:
    """What a built environment's marker says ({} for a folder heronbridge did not build)."""
    try:
        marker = json.loads((root / MARKER).read_text())
    except (OSError, ValueError):
        return {}
    return marker if isinstance(marker, dict) else {}


def ship(python: str, target: Path, where: str, progress: Progress) -> dict[str, Any]:
    """Put the wheels of the environment whose interpreter is `python` in `target`;
    returns what a host needs to install it from them (install_shipped)."""
    root = Path(python).parent.parent
    marker = marker_of(root)
    if not marker.get("key"):
        msg = (f"{where}: its tasks run with {python}, which is not a virtualenv heronbridge "
               "built (from virtualenvs/NAME.txt); only those travel to other hosts")
        raise EnvironmentBuildError(msg)
    if target.exists():
        shutil.rmtree(target)
    env = Environment(marker["key"], root, False, 0.0)
    return {"root": str(root), "requirements": wheelhouse(env, target, where, progress),
            "source": marker.get("source", ""), "interpreter": marker.get("interpreter", {}),
            "flags": marker.get("flags", [])}


def install_shipped(shipped: dict[str, Any], wheels: Path, where: str, cache_root: Path,
                    progress: Progress) -> Environment:
    """On a host that did not build it: the environment `ship` described, installed from
    its wheels alone into this host's cache (reused when there, by its hash)."""
    ours = this_interpreter()
    theirs = shipped.get("interpreter") or {}
    if (theirs.get("tag"), theirs.get("platform")) != (ours.tag, ours.platform):
        msg = (f"{where}: {shipped.get('source')} was built for Python "
               f"{theirs.get('version')} ({theirs.get('tag')}, {theirs.get('platform')}) where "
               f"it was submitted, but this host runs its tasks with {ours.describe()}; "
               "expected the same Python on every host (PYSPARK_PYTHON)")
        raise EnvironmentBuildError(msg)
    spec = Spec(where, str(shipped.get("source")), tuple(shipped.get("requirements") or ()),
                ours, tuple(shipped.get("flags") or ()), str(wheels))
    return Cache(cache_root).install_offline(spec, wheels, progress)
