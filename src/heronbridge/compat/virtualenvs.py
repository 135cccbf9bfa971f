"""A streamparse project's virtualenv: `virtualenvs/NAME.txt` built into the environment
the topology's Python tasks run in, as config.json says.

sparse builds it over SSH on every worker; here it is built once per requirements and
interpreter and cached under the home (runtime.scheduler.environments). config.json's
keys keep their meaning (the environment's values, overridden by `-o KEY=VALUE`):

- `virtualenv_specs` (top level, default `virtualenvs/`): the folder of `NAME.txt`;
- `use_virtualenv` (default true): false runs the tasks with heronbridge's interpreter;
- `install_virtualenv` (default: `use_virtualenv`): false builds nothing and uses the
  environment already there (built before, or `virtualenv_root/virtualenv_name`);
- `virtualenv_flags`: `-p`/`--python PYTHON` picks the interpreter (which must be
  heronbridge's version), `--system-site-packages` passes through;
- `virtualenv_name` (default: the topology's name): the cache's name for it
  (`<home>/virtualenvs/by-name/NAME`).

Requirements that heronbridge's own environment already meets are not installed again,
and streamparse and pystorm, which heronbridge itself provides to the tasks, never are,
whatever form the file names them in (a version, a VCS URL such as a course's
`git+git://github.com/.../streamparse.git#egg=streamparse`, a path, `-e`): one line says
so. A file that asks for nothing more builds nothing, and the tasks run with
heronbridge's interpreter. A line that cannot be built is named, with how to run
without the virtualenv.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from heronbridge.runtime.errors import where
from heronbridge.runtime.scheduler import environments as envs
from heronbridge.runtime.scheduler import requirements as reqs

from . import CompatError
from .streamparse import ProjectFiles

KEYS = ("use_virtualenv", "install_virtualenv", "virtualenv_flags", "virtualenv_name",
        "virtualenv_root")
PASSED_FLAGS = ("--system-site-packages",)
# What heronbridge gives a topology's tasks itself (its Storm host runs on them): a
# requirement for one, in any form, is met by heronbridge's own.
PROVIDED = ("streamparse", "pystorm", "heronbridge")
WITHOUT = ("to run without this virtualenv (its tasks then use heronbridge's own "
           "environment), pass -o use_virtualenv=false, or set \"use_virtualenv\": false in "
           "config.json's environment")


class VirtualenvError(CompatError):
    """A project's virtualenv settings or requirements cannot be honoured."""


@dataclass(frozen=True)
class TaskEnvironment:
    """Where a topology's tasks run: `python` (None: heronbridge's interpreter)."""

    python: str | None
    environment: envs.Environment | None = None
    spec: envs.Spec | None = None


def settings(files: ProjectFiles, options: dict[str, Any]) -> dict[str, Any]:
    """config.json's virtualenv keys for the environment in use, `-o` over them."""
    found = {k: options.get(k, files.env_config.get(k)) for k in KEYS}
    config = files.config_file

    def refuse(key: str, expected: str) -> None:
        msg = (f"{where(files.name)}: {str(config)!r}, environment {files.env!r}: expected "
               f"{key!r} to be {expected}, received {found[key]!r}")
        raise VirtualenvError(msg)

    for key in ("use_virtualenv", "install_virtualenv"):
        if found[key] is not None and not isinstance(found[key], bool):
            refuse(key, "true or false")
    for key in ("virtualenv_name", "virtualenv_root", "virtualenv_flags"):
        if found[key] is not None and not isinstance(found[key], str):
            refuse(key, "a string")
    name = found["virtualenv_name"] or files.name
    if "/" in name or name in (".", ".."):
        refuse("virtualenv_name", "a folder name")
    use = found["use_virtualenv"] is not False
    return {"use": use, "install": found["install_virtualenv"]
            if found["install_virtualenv"] is not None else use,
            "flags": found["virtualenv_flags"] or "", "name": name,
            "root": found["virtualenv_root"] or ""}


def _interpreter(files: ProjectFiles, flags: str) -> tuple[envs.Interpreter, tuple[str, ...]]:
    """The interpreter the flags name (heronbridge's by default) and the flags passed on."""
    try:
        words = shlex.split(flags)
    except ValueError as exc:
        msg = (f"{where(files.name)}: {str(files.config_file)!r}: 'virtualenv_flags' "
               f"{flags!r} cannot be split into arguments: {exc}")
        raise VirtualenvError(msg) from exc
    python, passed = None, []
    i = 0
    while i < len(words):
        word = words[i]
        if word in ("-p", "--python") and i + 1 < len(words):
            python, i = words[i + 1], i + 2
            continue
        if word.startswith("--python="):
            python = word.split("=", 1)[1]
        elif word in PASSED_FLAGS:
            passed.append(word)
        else:
            msg = (f"{where(files.name)}: {str(files.config_file)!r}: 'virtualenv_flags' has "
                   f"{word!r}; expected only -p/--python PYTHON and "
                   f"{', '.join(PASSED_FLAGS)} (the virtualenv is built by heronbridge)")
            raise VirtualenvError(msg)
        i += 1
    if python is None:
        return envs.this_interpreter(), tuple(passed)
    found = envs.probe_interpreter(python)
    if found is None:
        msg = (f"{where(files.name)}: {str(files.config_file)!r}: 'virtualenv_flags' names "
               f"the interpreter {python!r}, which is not found or does not run")
        raise VirtualenvError(msg)
    why = envs.mismatch(found)
    if why is not None:
        msg = (f"{where(files.name)}: {str(files.config_file)!r}: 'virtualenv_flags' names "
               f"{why}")
        raise VirtualenvError(msg)
    return found, tuple(passed)


def spec_of(files: ProjectFiles, flags: str
            ) -> tuple[envs.Spec | None, list[str], list[str]]:
    """The environment `virtualenvs/NAME.txt` asks for (None when heronbridge's own
    environment meets all of it), the requirements that environment meets (`line
    (version)`), and among them those heronbridge provides itself (PROVIDED)."""
    path = files.requirements
    if not path.is_file():
        return None, [], []
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        msg = f"{where(files.name)}: cannot read {str(path)!r}: {exc}"
        raise VirtualenvError(msg) from exc
    needed: list[tuple[int, str]] = []
    met, own = [], []
    for number, line in reqs.lines(text):
        name = reqs.name_of(line)
        if name in PROVIDED:
            own.append(f"{line} (line {number}: heronbridge's own {name} {_version(name)})")
            met.append(own[-1])
            continue
        version = reqs.provided(line)
        if version is None:
            needed.append((number, line))
        else:
            met.append(f"{line} ({version})")
    interpreter, passed = _interpreter(files, flags)
    if not needed and interpreter.path == envs.this_interpreter().path and not passed:
        return None, met, own
    return envs.Spec(where(files.name), str(path), tuple(line for _, line in needed),
                     interpreter, passed, str(path.parent),
                     tuple(number for number, _ in needed), WITHOUT), met, own


def _version(name: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return envs.runtime_version() if name == "heronbridge" else "(not installed)"


def prepare(files: ProjectFiles, home: Path, options: dict[str, Any],
            progress: envs.Progress, rebuild: bool = False) -> TaskEnvironment:
    """The environment the topology's tasks run in, built or reused (saying which)."""
    conf = settings(files, options)
    if not conf["use"]:
        return TaskEnvironment(None)
    cache = envs.Cache(home / "virtualenvs")
    if not conf["install"]:
        return TaskEnvironment(_existing(files, conf, cache, progress))
    spec, met, own = spec_of(files, conf["flags"])
    path = files.requirements
    if spec is None:
        if path.is_file():
            progress(f"{where(files.name)}: {path.relative_to(files.root)} asks for nothing "
                     f"heronbridge's environment lacks ({', '.join(met) or 'no requirements'}"
                     "); its tasks run there")
        return TaskEnvironment(None)
    if own:
        progress(f"{where(files.name)}: {path.relative_to(files.root)} asks for what "
                 f"heronbridge provides its tasks itself, so it is not installed: "
                 f"{', '.join(own)}")
    env = cache.ensure(spec, progress, rebuild)
    if not env.built:
        progress(f"{where(files.name)}: reusing its virtualenv {env.root} (built from "
                 f"{path.relative_to(files.root)}: {', '.join(spec.requirements)})")
    _name(cache, conf["name"], env.root)
    return TaskEnvironment(env.python, env, spec)


def _name(cache: envs.Cache, name: str, root: Path) -> None:
    """`<cache>/by-name/NAME` points at the environment (virtualenv_name)."""
    names = cache.root / "by-name"
    envs._own_folder(names, "the virtualenv cache's names")  # noqa: SLF001 - same layer's
    link = names / name
    tmp = names / f".{name}.{os.getpid()}"
    tmp.unlink(missing_ok=True)
    tmp.symlink_to(root)
    os.replace(tmp, link)


def _existing(files: ProjectFiles, conf: dict[str, Any], cache: envs.Cache,
              progress: envs.Progress) -> str:
    """install_virtualenv false: the environment already there, never built here."""
    if conf["root"]:
        root = Path(conf["root"]).expanduser() / conf["name"]
        said = f"virtualenv_root/virtualenv_name ({root})"
    else:
        root = cache.root / "by-name" / conf["name"]
        said = f"the virtualenv named {conf['name']!r} ({root})"
    python = root / "bin" / "python"
    why = envs._trusted(root.resolve()) if root.exists() else "missing"  # noqa: SLF001
    if why is None and not python.exists():
        why = "without bin/python"
    if why is not None:
        msg = (f"{where(files.name)}: {str(files.config_file)!r} sets install_virtualenv "
               f"false, so its tasks run in {said}, which is {why}; expected a virtualenv "
               "built before (a run with install_virtualenv true builds it)")
        raise VirtualenvError(msg)
    try:  # a virtualenv of the user's own must have heronbridge (ours have it by a .pth)
        subprocess.run([str(python), "-c", "import heronbridge.runtime.instance"],
                       capture_output=True, timeout=120, check=True, cwd="/")
    except (OSError, subprocess.SubprocessError) as exc:
        msg = (f"{where(files.name)}: {str(files.config_file)!r} sets install_virtualenv "
               f"false, so its tasks run in {said}, where heronbridge cannot be imported "
               f"({exc}); expected heronbridge {envs.runtime_version()} installed there, or "
               "install_virtualenv true (heronbridge builds it, with itself importable)")
        raise VirtualenvError(msg) from exc
    progress(f"{where(files.name)}: install_virtualenv is false: its tasks run in {said}")
    return str(python)
