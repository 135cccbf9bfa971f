"""Loading a streamparse project as `sparse run` would, into the runtime's logical plan.

config.json names the topology folder, the environments and the serializer; the
topology module is imported with src/ on the path and its Topology class read through
streamparse's own DSL (`Topology.specs`). Options are resolved with sparse's precedence:
command line over the Topology's config over the environment's options.
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import importlib
import importlib.util
import json
import logging
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from heronbridge.runtime.config import EFFECTIVELY_ONCE, RELIABILITY_MODE
from heronbridge.runtime.config import SERIALIZER as SERIALIZER_OPTION
from heronbridge.runtime.errors import where
from heronbridge.runtime.loader import FileImportError, import_file
from heronbridge.runtime.plan.logical import (
    BOLT,
    SPOUT,
    ComponentSpec,
    Grouping,
    Input,
    LogicalPlan,
    Stream,
)
from heronbridge.runtime.scheduler import jvm
from heronbridge.runtime.scheduler.environments import TASK_PYTHON
from heronbridge.shims.common import logs
from heronbridge.shims.storm import keys
from heronbridge.shims.storm.lean import lean_capable

from . import CompatError
from .java import java_config, object_spec, project_jars, serialized_spec
from .storm_config import acker_tasks, check_storm_options, runtime_config

IN_PROCESS = "heronbridge.shims.storm.inprocess:PystormComponent"
SUBPROCESS = "heronbridge.shims.storm.subprocess:ShellComponent"
STREAMPARSE_RUN = keys.STREAMPARSE_RUN
PARTIAL_KEY_CLASS = "org.apache.storm.grouping.PartialKeyGrouping"

log = logging.getLogger("heronbridge.compat")


@dataclass
class Project:
    """A loaded streamparse project: the plan to run and where its code comes from."""

    root: Path
    name: str
    env: str | None
    plan: LogicalPlan
    source: Path  # the project's src/, copied to `resources` before the topology starts
    options: dict[str, Any] = field(default_factory=dict)  # the Storm options, resolved
    topology: Any = None  # the streamparse Topology class (e.g. for its to_flux_dict)
    serializer: str = "json"
    java_jars: list[Path] = field(default_factory=list)  # its Java code (compat.java)

    def install_resources(self, resources: Path) -> None:
        """Copy src/ where the tasks run it (Storm runs a copy too, from its jar)."""
        if resources.exists():
            shutil.rmtree(resources)
        if self.source.is_dir():
            shutil.copytree(self.source, resources,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            resources.mkdir(parents=True)


@dataclass(frozen=True)
class ProjectFiles:
    """What a project's config.json says, before its topology module is imported."""

    root: Path
    config_file: Path
    config: dict[str, Any]
    name: str  # the topology's name: its file's stem, as sparse names it
    topology_file: Path
    env: str | None
    env_config: dict[str, Any]
    serializer: str

    @property
    def requirements(self) -> Path:
        """virtualenvs/NAME.txt (the folder config.json's virtualenv_specs names): the
        packages the topology's tasks need beyond heronbridge's environment."""
        specs = self.config.get("virtualenv_specs", "virtualenvs/")
        if not isinstance(specs, str) or not specs:
            msg = (f"{str(self.config_file)!r}: expected 'virtualenv_specs' to be the folder "
                   f"of the requirements files (e.g. \"virtualenvs/\"), received {specs!r}")
            raise CompatError(msg)
        return self.root / specs / f"{self.name}.txt"


def missing_package(files: ProjectFiles, module: str) -> str:
    """The next step for a module the topology's code imports and nobody provides ('' for
    one of the project's own, under src/)."""
    top = module.split(".", maxsplit=1)[0]
    src = files.root / "src"
    if (src / top).exists() or (src / f"{top}.py").exists():
        return ""
    return (f"; its tasks import from heronbridge's environment and the packages "
            f"{files.requirements} names: add a line for the package that provides {top!r} "
            f"there (e.g. `{top}`), then run again")


def read_project(path: str | Path, name: str | None = None,
                 env: str | None = None) -> ProjectFiles:
    """Read config.json and find the topology file and environment it names."""
    root = Path(path).resolve()
    config_file = root / "config.json"
    if not config_file.is_file():
        _no_project(root)
    config = _read_config(config_file)
    specs_dir = root / config.get("topology_specs", "topologies/")
    name, topology_file = _topology_file(specs_dir, name)
    env_name, env_config = _env(config, env, config_file)
    _check_env(env_name, env_config, config_file)
    serializer = env_config.get("serializer", config.get("serializer")) or "json"
    if serializer not in ("json", "msgpack"):
        msg = (f"{str(config_file)!r}: expected serializer 'json' or 'msgpack', received "
               f"{serializer!r}")
        raise CompatError(msg)
    return ProjectFiles(root, config_file, config, name, topology_file, env_name, env_config,
                        serializer)


def load_project(path: str | Path, name: str | None = None, env: str | None = None,
                 options: dict[str, Any] | None = None, multilang: bool = False,
                 resources: Path | None = None, python: str | None = None,
                 java_jars: Path | None = None) -> Project:
    """Read the project at `path`. `resources` is where its src/ will be copied (the
    tasks' working folder); `multilang` runs Python components as subprocesses too;
    `python`: the interpreter of the topology's own virtualenv, which its tasks run with
    (its classes are imported here with that environment's packages); `java_jars`: a
    folder of jars with the project's Java code, beside lein's."""
    files = read_project(path, name, env)
    root, name, topology_file = files.root, files.name, files.topology_file
    env_name, serializer = files.env, files.serializer
    workdir = resources.parent if resources is not None else None
    resources = resources or root / "src"
    with project_imports(topology_file.parent, root / "src", python=python):
        topology = _import_topology(topology_file, name, files)
        storm_options = check_storm_options(
            resolve_options(options or {}, files.env_config, topology.config or {}), name)
        _check_serializer_option(name, storm_options, serializer, files.config_file)
        plan = plan_of_specs(name, topology.specs, set(topology.thrift_spouts), storm_options,
                             serializer, env_name, multilang, resources, root / "src")
    if python is not None:
        plan.config[TASK_PYTHON] = python
    check_log_path(plan, workdir)
    return Project(root, name, env_name, plan.validate(), root / "src", storm_options,
                   topology, serializer, project_jars(root, java_jars))


def _check_serializer_option(name: str, options: dict[str, Any], serializer: str,
                             config_file: Path) -> None:
    """A streamparse project's tuples cross its config.json serializer, as under Storm:
    heronbridge.serializer may only name that one."""
    value = options.get(SERIALIZER_OPTION)
    if value is not None and value != serializer:
        msg = (f"{where(name)}: config {SERIALIZER_OPTION!r} expects {serializer!r}, the "
               f"serializer {str(config_file)!r} gives this streamparse project (its tuples "
               f"cross it as under Storm; set 'serializer' there to 'json' or 'msgpack'), "
               f"received {value!r}")
        raise CompatError(msg)


def plan_of_specs(name: str, specs: Any, spouts: set[str], storm_options: dict[str, Any],
                  serializer: str, env: str | None, multilang: bool, resources: Path,
                  src: Path) -> LogicalPlan:
    """The runtime's plan of streamparse component specs (the DSL's `Topology.specs`, or
    objects with the same fields), their classes importable now. `resources`: where the
    tasks will find src/; `src`: where it is now."""
    components = {spec.name: _component(name, spec, spec.name in spouts, env, serializer,
                                        multilang, resources, src) for spec in specs}
    plan = LogicalPlan(name, components, runtime_config(storm_options, serializer),
                       [str(resources)])
    if plan.config[RELIABILITY_MODE] == EFFECTIVELY_ONCE:
        _refuse_uncheckpointable(name, components, multilang)
    ackers = acker_tasks(storm_options) if storm_options.get("topology.acker.executors") != 0 \
        else 0
    if ackers:
        plan.reserved["__acker"] = ackers
    return plan


def _refuse_uncheckpointable(name: str, components: dict[str, ComponentSpec],
                             multilang: bool) -> None:
    """EFFECTIVELY_ONCE saves the state of components hosted in their task's process
    and rebuilds them, at a rollback, between two calls of the task's loops. Refused here
    rather than by each task in a restart loop: multilang subprocesses (a child's state
    is not the task's) and classes that keep pystorm's own loop (threads of their own)."""
    shells = sorted(c.name for c in components.values() if c.class_path == SUBPROCESS)
    threads = sorted(c.name for c in components.values() if c.class_path == IN_PROCESS and
                     not lean_capable(_check_class(where(name, c.name), c.config[keys.CLASS])))
    java = sorted(c.name for c in components.values() if jvm.COMPONENT in c.config)
    why = ([f"{shells} run as multilang subprocesses{' (--multilang)' if multilang else ''}"]
           if shells else []) + ([f"{threads} run threads of their own"] if threads else []) \
        + ([f"{java} run in the JVM task host"] if java else [])
    if why:
        msg = (f"{where(name)}: {EFFECTIVELY_ONCE} checkpoints components that their task "
               f"calls in its own process; {'; '.join(why)}; expected Python components "
               "without threads, run in-process")
        raise CompatError(msg)


def topology_name(path: str | Path, name: str | None = None) -> str:
    """The name of the topology `load_project` would load."""
    root = Path(path).resolve()
    config_file = root / "config.json"
    if not config_file.is_file():
        return _no_project(root)
    config = _read_config(config_file)
    return _topology_file(root / config.get("topology_specs", "topologies/"), name)[0]


def _read_config(config_file: Path) -> dict[str, Any]:
    """config.json: a JSON object whose `envs`, where present, maps names to objects."""
    try:
        config = json.loads(config_file.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        msg = f"{str(config_file)!r} is not valid JSON: {exc}"
        raise CompatError(msg) from exc
    if not isinstance(config, dict):
        msg = (f"{str(config_file)!r}: expected a JSON object (streamparse's config.json), "
               f"received {type(config).__name__} {json.dumps(config)[:80]}")
        raise CompatError(msg)
    specs = config.get("topology_specs", "topologies/")
    if not isinstance(specs, str) or not specs:
        msg = (f"{str(config_file)!r}: expected 'topology_specs' to be the folder of the "
               f"topology definitions (a path, e.g. \"topologies/\"), received "
               f"{json.dumps(specs)[:80]}")
        raise CompatError(msg)
    envs = config.get("envs", {})
    bad = [k for k, v in envs.items() if not isinstance(v, dict)] \
        if isinstance(envs, dict) else None
    if bad is None or bad:
        got = envs if bad is None else {k: envs[k] for k in bad}
        msg = (f"{str(config_file)!r}: expected 'envs' to map environment names to objects, "
               f"received {json.dumps(got)[:120]}")
        raise CompatError(msg)
    return config


# What sparse reads of an environment's `log` (and the legacy keys beside it).
_LOG_TEXTS = ("path", "file")
_LOG_COUNTS = ("max_bytes", "backup_count")


def _check_env(name: str | None, env: dict[str, Any], config_file: Path) -> None:
    """The values of an environment that sparse and the runtime read, by type: each
    wrong one named as config.json has it."""
    def refuse(key: str, expected: str, value: Any) -> None:
        msg = (f"{str(config_file)!r}, environment {name!r}: expected {key!r} to be "
               f"{expected}, received {json.dumps(value)[:80]}")
        raise CompatError(msg)

    options = env.get("options", {})
    if not isinstance(options, dict):
        refuse("options", "an object of Storm options", options)
    log_settings = env.get("log", {})
    if not isinstance(log_settings, dict):
        refuse("log", "an object (path, file, max_bytes, backup_count, level)", log_settings)
    for key in _LOG_TEXTS:
        for where_, value in ((f"log.{key}", log_settings.get(key)),
                              (f"log_{key}", env.get(f"log_{key}"))):
            if value is not None and not isinstance(value, str):
                refuse(where_, "a string (a folder or file name)", value)
    for key in _LOG_COUNTS:
        value = log_settings.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or value < 0):
            refuse(f"log.{key}", "an integer >= 0", value)
    level = log_settings.get("level")
    if level is not None and (not isinstance(level, str) or level.lower() not in logs.LEVELS):
        refuse("log.level", f"one of {sorted(logs.LEVELS)}", level)


def _no_project(root: Path) -> Any:
    if not root.exists():
        msg = (f"{str(root)!r}: no such folder; expected a streamparse project (a folder "
               "with config.json and topologies/) there")
    elif not root.is_dir():
        msg = (f"{str(root)!r} is a file, not a folder; expected a streamparse project (a "
               "folder with config.json and topologies/) there")
    else:
        msg = (f"{str(root)!r} is not a streamparse project: expected a config.json there "
               "(run inside the project, or pass --project PATH)")
    raise CompatError(msg)


def resolve_options(cli: dict, env_config: dict, topology_config: dict) -> dict[str, Any]:
    """Storm options with sparse run's precedence and defaults (local_only=True)."""
    options: dict[str, Any] = dict(env_config.get("options", {}))
    options.update(env_log_options(env_config))
    options.update(topology_config)
    options.update(cli)
    if options.get("topology.debug", False):
        options["pystorm.log.level"] = "debug"
    options["storm.workers.list"] = []
    if options.get("topology.acker.executors") is None:
        options["topology.acker.executors"] = 1
    if options.get("topology.workers") is None:
        options["topology.workers"] = 1
    return options


def env_log_options(env_config: dict) -> dict[str, Any]:
    """An environment's log settings as the pystorm options sparse makes of them."""
    out: dict[str, Any] = {}
    settings = env_config.get("log", {})
    for key, value in ((logs.PATH, settings.get("path") or env_config.get("log_path")),
                       (logs.FILE, settings.get("file") or env_config.get("log_file"))):
        if value:
            out[key] = value
    for key, name in ((logs.MAX_BYTES, "max_bytes"), (logs.BACKUP_COUNT, "backup_count")):
        if isinstance(settings.get(name), int):
            out[key] = settings[name]
    if isinstance(settings.get("level"), str):
        out[logs.LEVEL] = settings["level"].lower()
    return out


def check_log_path(plan: LogicalPlan, workdir: Path | None = None) -> list[str]:
    """Check the log folder the plan configures before anything starts, creating it if
    it can: one that cannot be used gives way to each task's own log folder, with one
    warning that says so (returned too). `workdir`: the topology's folder under --home."""
    instead = (f"{workdir}/container-N/logs/" if workdir is not None else
               "topologies/NAME/current/container-N/logs/ under --home")
    warnings = []
    for path, why in logs.check_plan(plan):
        text = (f"{where(plan.name)}: the log path {path!r} cannot be used here ({why}); "
                "the components' log files go to their task's log folder instead, "
                f"{instead}; to use another folder, pass -o {logs.PATH}=DIR or set log.path "
                "in config.json's env")
        log.warning("warning: %s", text)
        warnings.append(text)
    return warnings


def _topology_file(specs_dir: Path, name: str | None) -> tuple[str, Path]:
    if name is not None:
        path = specs_dir / f"{name}.py"
        if not path.is_file():
            names = sorted(f.stem for f in specs_dir.glob("*.py"))
            nearest = difflib.get_close_matches(name, names, n=1)
            msg = (f"topology {name!r}: expected a definition at {str(path)!r}, found none; "
                   + (f"the project's topologies: {', '.join(names)}" if names else
                      f"the project has no topology definitions (*.py) in {str(specs_dir)!r}")
                   + (f" (did you mean {nearest[0]!r}?)" if nearest else ""))
            raise CompatError(msg)
        return name, path
    files = sorted(specs_dir.glob("*.py"))
    if len(files) != 1:
        found = [f.stem for f in files]
        msg = (f"expected exactly one topology in {str(specs_dir)!r}, found {found}; "
               "pick one with -n NAME" if files else
               f"no topology definitions (*.py) in {str(specs_dir)!r}")
        raise CompatError(msg)
    return files[0].stem, files[0]


def _env(config: dict, env: str | None, config_file: Path) -> tuple[str | None, dict]:
    envs = config.get("envs") or {}
    if env is None:
        if len(envs) > 1:
            msg = (f"{str(config_file)!r} defines several environments {sorted(envs)}; "
                   "pick one with -e ENV")
            raise CompatError(msg)
        env = next(iter(envs), None)
    elif env not in envs:
        msg = f"{str(config_file)!r} has no environment {env!r}; it has {sorted(envs)}"
        raise CompatError(msg)
    return env, envs.get(env, {}) if env else {}


@functools.cache
def task_path(python: str | None = None) -> tuple[str, ...]:
    """The module search path a task starts with, less the folder it starts in (which
    holds no module): what a new process of the tasks' interpreter (this one, or a
    topology's virtualenv's) sees, not what this one was given (`python -m heronbridge`
    from a project's folder has that folder first, so `from src.bolts import ...` would
    import here and fail in every task)."""
    try:
        found = subprocess.run(
            [python or sys.executable, "-P", "-c",
             "import json, sys; print(json.dumps(sys.path))"],
            capture_output=True, text=True, timeout=60, check=True, cwd="/")
        return tuple(json.loads(found.stdout))
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        if python is not None:
            msg = f"cannot run the tasks' interpreter {python!r}: {exc}"
            raise CompatError(msg) from exc
        # No new process: ours, less the cwd.
        return tuple(p for p in sys.path if p not in ("", os.getcwd()))


@contextlib.contextmanager
def project_imports(*folders: Path, python: str | None = None) -> Iterator[None]:
    """Import a project's modules as its tasks will: with its folders first on the path,
    then the tasks' own path (task_path, of `python` when they run with a virtualenv's),
    never what this process added; and forget them afterwards: projects share module
    names (`bolts`, `spouts`), and one process may load several. A module of the same
    name imported before comes back."""
    path, modules = list(sys.path), dict(sys.modules)
    sys.path[:] = [*(str(f) for f in folders), *task_path(python)]
    importlib.invalidate_caches()
    try:
        yield
    finally:
        sys.path[:] = path
        for name in set(sys.modules) - set(modules):
            del sys.modules[name]
        sys.modules.update(modules)


def _import_topology(topology_file: Path, name: str, files: ProjectFiles) -> Any:
    from streamparse.dsl.topology import Topology, TopologyType

    try:
        module = import_file(topology_file)
    except FileImportError as exc:
        cause = exc.__cause__
        hint = _src_hint(cause) or (
            missing_package(files, cause.name)
            if isinstance(cause, ModuleNotFoundError) and cause.name else "")
        msg = f"topology {name!r}: {exc}{hint}"
        raise CompatError(msg) from cause
    for value in vars(module).values():
        if isinstance(value, TopologyType) and value is not Topology:
            return value
    msg = f"topology {name!r}: {str(topology_file)!r} defines no streamparse Topology subclass"
    raise CompatError(msg)


def _src_hint(exc: BaseException | None) -> str:
    """What to do about `from src.X import ...`: Storm's jar, and the tasks here, have
    src/'s contents at the top of the path, and no package `src`."""
    if isinstance(exc, ModuleNotFoundError) and (exc.name or "").split(".")[0] == "src":
        return ("; src/ is where imports start (its folder is the tasks' working folder, "
                "as the resources/ of Storm's jar), so expected `from X import ...` for "
                "src/X.py, received an import of the package `src`")
    return ""


def _check_class(where: str, class_path: str) -> type:
    """A streamparse component class must import from src/, as streamparse_run imports it."""
    module, _, name = class_path.rpartition(".")
    try:
        found = getattr(importlib.import_module(module), name) if module else None
    except Exception as exc:
        msg = (f"{where}: its class {class_path!r} cannot be imported from src/: "
               f"{type(exc).__name__}: {exc}{_src_hint(exc)}")
        raise CompatError(msg) from exc
    if found is None:
        msg = f"{where}: expected a class 'module.Class' importable from src/, got {class_path!r}"
        raise CompatError(msg)
    return found


def _component(topology: str, spec: Any, is_spout: bool, env: str | None, serializer: str,
               multilang: bool, resources: Path, src: Path) -> ComponentSpec:
    where = f"topology {topology!r}, component {spec.name!r}"
    obj = spec.component_object
    par = spec.par
    if isinstance(par, dict):
        if env not in par:
            msg = (f"{where}: par is given per environment {sorted(par)}, but not for the "
                   f"environment in use ({env!r})")
            raise CompatError(msg)
        par = par[env]
    config = json.loads(spec.config) if isinstance(spec.config, str) else dict(spec.config or {})
    outputs = {s: Stream(s, tuple(info.output_fields), bool(info.direct))
               for s, info in spec.outputs.items()}
    def serialized(gid: Any) -> Callable[[bytes], dict[str, Any]]:
        """What makes the host's spec of the Java grouping on `gid`'s input."""
        return lambda data: serialized_spec(
            where, data, f"{spec.name}.{gid.componentId}.{gid.streamId}", resources, src)[1]

    inputs = [Input(gid.componentId, gid.streamId,
                    _grouping(where, grouping, serialized(gid)))
              for gid, grouping in spec.inputs.items()]
    kind = SPOUT if is_spout else BOLT
    if obj.java_object is not None or obj.serialized_java is not None:  # the JVM task host
        class_path, java = java_config(where, obj, spec.name, resources, src)
        return ComponentSpec(spec.name, kind, class_path, par, outputs, inputs,
                             {**config, **java})
    command, script = obj.shell.execution_command, obj.shell.script
    words = script.split()
    if "-s" in words:  # a serializer sparse put in front of the class name
        i = words.index("-s")
        del words[i:i + 2]
    config[keys.SERIALIZER] = serializer
    config[keys.RESOURCES] = str(resources)
    if command == STREAMPARSE_RUN:
        _check_class(where, words[-1] if words else "")
    elif words and words[0].endswith(".py") and not (src / words[0]).is_file():
        msg = (f"{where}: runs script {words[0]!r}, which is not in the project's src/ "
               f"({str(src)!r}); Storm runs shell components from there")
        raise CompatError(msg)
    if command == STREAMPARSE_RUN and not multilang:
        config[keys.CLASS] = words[-1]
        class_path = IN_PROCESS
    else:
        if command == STREAMPARSE_RUN:
            script = " ".join(["-s", serializer, *words])
        config[keys.COMMAND] = command
        config[keys.SCRIPT] = script
        class_path = SUBPROCESS
    return ComponentSpec(spec.name, kind, class_path, par, outputs, inputs, config)


def _grouping(where: str, grouping: Any,
              serialized: Callable[[bytes], dict[str, Any]] | None = None) -> Grouping:
    """`serialized`: what makes the host's spec of a serialized Java custom grouping
    (Storm's customGrouping). A Java custom grouping runs in a JVM beside the sending
    task, as Storm runs it in the sender's worker, whatever the sender's language."""
    if grouping.fields is not None:
        return Grouping.by_fields(grouping.fields) if grouping.fields else Grouping.GLOBAL
    for member, result in (("shuffle", Grouping.SHUFFLE), ("all", Grouping.ALL),
                           ("none", Grouping.NONE), ("direct", Grouping.DIRECT),
                           ("local_or_shuffle", Grouping.LOCAL_OR_SHUFFLE)):
        if getattr(grouping, member) is not None:
            return result
    custom = grouping.custom_object
    if custom is not None and custom.full_class_name == PARTIAL_KEY_CLASS:
        return Grouping.partial_key()
    if custom is not None:
        return Grouping.custom_grouping(json.dumps(object_spec(where, custom)))
    data = getattr(grouping, "custom_serialized", None)
    if data is not None and serialized is not None:
        return Grouping.custom_grouping(json.dumps(serialized(data)))
    msg = (f"{where}: a custom Java grouping ({grouping}) cannot run here; expected shuffle, "
           "fields, all, global, none, direct, local-or-shuffle, partial key, or a custom "
           "grouping Storm can make (a JavaObject, or serialized by Storm's TopologyBuilder)")
    raise CompatError(msg)
