"""heronpy topologies into the runtime's logical plan.

A heronpy topology is a `Topology` subclass (its metaclass builds Heron's Topology
protobuf when the class is created) or a `TopologyBuilder` (whose `build_and_submit()`
writes that protobuf to a `.defn` file, as `heron submit` reads it). Either way the
protobuf is what is read here: components and their class names, output schemas,
inputs with their groupings, and config key-values in heronpy's encoding.

Creating a Topology class needs `HERON_OPTIONS` naming a folder for definition files
(`heron submit` sets it); the loader sets it while it imports the user's module, with
`cmdline.topology.name` when the name is given (a project's topology is named after its
file, as sparse names it).
"""

from __future__ import annotations

import ast
import base64
import contextlib
import importlib
import importlib.util
import os
import runpy
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from heronbridge.runtime import config as rt
from heronbridge.runtime.errors import PlanError
from heronbridge.runtime.loader import FileImportError, import_file
from heronbridge.runtime.plan import logical
from heronbridge.runtime.plan.logical import Grouping, LogicalPlan
from heronbridge.runtime.scheduler.environments import TASK_PYTHON
from heronbridge.shims.heronpy import keys
from heronbridge.shims.heronpy.config import read_config
from heronbridge.shims.heronpy.keys import HERON_OPTIONS

from . import HeronpyError, require_heronpy

# Where migrated code imports from: this package (before the hosts moved) and the shims'.
HERONPY_HOMES = ("heronbridge.compat.heronpy", "heronbridge.shims.heronpy")
HOST_SPOUT = "heronbridge.shims.heronpy.host:HeronpySpout"
HOST_BOLT = "heronbridge.shims.heronpy.host:HeronpyBolt"
# Under EFFECTIVELY_ONCE every component is hosted by a stateful host (state.py).
STATEFUL_HOSTS = {HOST_SPOUT: "heronbridge.shims.heronpy.state:StatefulHeronpySpout",
                  HOST_BOLT: "heronbridge.shims.heronpy.state:StatefulHeronpyBolt"}
CUSTOM_GROUPING = "heronbridge.shims.heronpy.grouping:HeronpyGrouping"
PARALLELISM = "topology.component.parallelism"
ACKER = "__acker"
STREAMLET_CLASSES = ("heronpy.streamlet.impl.", "heronbridge.shims.heronpy.sink.")

# heronpy's protobuf enums (heron.proto.api): ComponentObjectSpec, Grouping and
# CustomGroupingObjectType values.
PYTHON_CLASS_NAME = 3
SHUFFLE, FIELDS, ALL, LOWEST, NONE, DIRECT, CUSTOM_GTYPE = 1, 2, 3, 4, 5, 6, 7
PYTHON_OBJECT = 2
_GROUPINGS = {SHUFFLE: Grouping.SHUFFLE, ALL: Grouping.ALL, LOWEST: Grouping.GLOBAL,
              NONE: Grouping.NONE}


# -- the protobuf -> the plan --------------------------------------------------------


def plan_from_proto(proto: Any, config: dict[str, Any], python_path: list[str],
                    main_module: str | None = None,
                    component_config: dict[str, Any] | None = None) -> LogicalPlan:
    """The plan of a heronpy Topology protobuf. `config`: the topology config (already
    merged with any options); `main_module` replaces `__main__` in class names (a file
    run as a script); `component_config` is added to every component's config."""
    name = proto.name
    components: dict[str, logical.ComponentSpec] = {}
    inputs: dict[str, list[list[Any]]] = {}
    custom: dict[str, dict[str, dict[str, str]]] = {}  # source -> bolt -> stream -> object
    for spout in proto.spouts:
        spec = _component(name, spout.comp, logical.SPOUT, spout.outputs, main_module)
        components[spec.name] = spec
    for bolt in proto.bolts:
        spec = _component(name, bolt.comp, logical.BOLT, bolt.outputs, main_module)
        where = f"topology {name!r}, component {spec.name!r}"
        for inp in bolt.inputs:
            source, stream = inp.stream.component_name, inp.stream.id
            spec.inputs.append(logical.Input(source, stream, _grouping(where, inp)))
            inputs.setdefault(spec.name, []).append([source, stream, inp.gtype])
            if inp.gtype == CUSTOM_GTYPE:
                blob = base64.b64encode(inp.custom_grouping_object).decode()
                custom.setdefault(source, {}).setdefault(spec.name, {})[stream] = blob
        components[spec.name] = spec
    for source, groupings in custom.items():
        if source in components:
            components[source].config[keys.CUSTOM_GROUPINGS] = groupings
    for spec in components.values():
        spec.config.update(component_config or {})
    config = dict(config)
    config[keys.INPUTS] = inputs
    mode = _reliability(name, config)
    if mode == rt.EFFECTIVELY_ONCE:
        for spec in components.values():
            spec.class_path = STATEFUL_HOSTS[spec.class_path]
    plan = LogicalPlan(name, components, config, list(python_path))
    if mode == rt.ATLEAST_ONCE:
        # Storm numbers one __acker task per worker before the components that sort
        # after it; a migrated topology keeps Storm's task ids.
        plan.reserved[ACKER] = _containers(name, config)
    try:
        return plan.validate()
    except PlanError as exc:
        raise HeronpyError(str(exc)) from exc


def _component(topology: str, comp: Any, kind: str, outputs: Any,
               main_module: str | None) -> logical.ComponentSpec:
    where = f"topology {topology!r}, component {comp.name!r}"
    if comp.spec != PYTHON_CLASS_NAME or not comp.class_name:
        msg = (f"{where}: expected a Python class (PYTHON_CLASS_NAME), received component "
               f"object spec {comp.spec} ({comp.class_name or 'no class name'}); Java and "
               "serialized components cannot run here")
        raise HeronpyError(msg)
    config = read_config(comp.config, where)
    par = config.get(PARALLELISM, 1)
    if isinstance(par, bool) or not isinstance(par, int) or par < 1:
        msg = f"{where}: {PARALLELISM} expects an integer >= 1, received {par!r}"
        raise HeronpyError(msg)
    class_name = comp.class_name
    if main_module and class_name.startswith("__main__."):
        class_name = main_module + class_name[len("__main__"):]
    config[keys.CLASS] = class_name
    streams = {o.stream.id: logical.Stream(o.stream.id, tuple(k.key for k in o.schema.keys))
               for o in outputs}
    host = HOST_SPOUT if kind == logical.SPOUT else HOST_BOLT
    return logical.ComponentSpec(comp.name, kind, host, par, streams, [], config)


def _grouping(where: str, inp: Any) -> Grouping:
    gtype = inp.gtype
    if gtype in _GROUPINGS:
        return _GROUPINGS[gtype]
    if gtype == FIELDS:
        return Grouping.by_fields([k.key for k in inp.grouping_fields.keys])
    if gtype == CUSTOM_GTYPE and inp.type == PYTHON_OBJECT and inp.custom_grouping_object:
        return Grouping(logical.CUSTOM, (), CUSTOM_GROUPING)
    stream = f"{inp.stream.component_name}:{inp.stream.id}"
    msg = (f"{where}: input {stream} has grouping type {gtype} (custom object type "
           f"{inp.type}); expected SHUFFLE, FIELDS, ALL, LOWEST, NONE or a Python custom "
           "grouping (heronpy declares no direct streams, and Java groupings cannot run here)")
    raise HeronpyError(msg)


def _reliability(name: str, config: dict[str, Any]) -> str:
    mode = config.get(rt.RELIABILITY_MODE, rt.ATMOST_ONCE)
    if mode not in rt.MODES:
        msg = (f"topology {name!r}: {rt.RELIABILITY_MODE} expects one of {rt.MODES}, "
               f"received {mode!r}")
        raise HeronpyError(msg)
    return mode


def _containers(name: str, config: dict[str, Any]) -> int:
    value = config.get(rt.CONTAINERS, 1)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        msg = f"topology {name!r}: {rt.CONTAINERS} expects an integer >= 1, received {value!r}"
        raise HeronpyError(msg)
    return value


def topology_config(proto: Any) -> dict[str, Any]:
    return read_config(proto.topology_config, f"topology {proto.name!r}")


# -- finding topologies in a module ---------------------------------------------------


@contextlib.contextmanager
def heron_options(defn_dir: str, name: str | None = None) -> Iterator[None]:
    """HERON_OPTIONS as `heron submit` sets it, for as long as the block runs."""
    options = {"cmdline.topologydefn.tmpdirectory": defn_dir,
               "cmdline.topology.initial.state": "RUNNING"}
    if name:
        options["cmdline.topology.name"] = name
    old = os.environ.get(HERON_OPTIONS)
    os.environ[HERON_OPTIONS] = ",".join(f"{k}={v}".replace(" ", "%%%%")
                                         for k, v in options.items())
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(HERON_OPTIONS, None)
        else:
            os.environ[HERON_OPTIONS] = old


def imports_heronpy(path: Path) -> bool:
    """Whether a Python file imports heronpy itself, or this package's heronpy classes
    (read, not run)."""
    try:
        tree = ast.parse(path.read_bytes(), str(path))
    except (OSError, SyntaxError):
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names = [node.module or ""]
        else:
            continue
        if any(n.split(".")[0] == "heronpy" or n.startswith(HERONPY_HOMES) for n in names):
            return True
    return False


def import_module_file(path: Path, where: str) -> Any:
    """Import `path` as the module named after its stem."""
    try:
        return import_file(path)
    except FileImportError as exc:
        cause = exc.__cause__
        if isinstance(cause, ModuleNotFoundError) and (cause.name or "").split(".")[0] \
                == "heronpy":
            require_heronpy(where)
        what = str(exc)
        if repr(str(path)) in where:
            what = what.removeprefix(f"{str(path)!r} ")
        msg = f"{where}: {what}"
        raise HeronpyError(msg) from cause


def topologies_in(module: Any, defn_dir: str) -> dict[str, tuple[Any, Any]]:
    """{name: (protobuf, the Topology class or builder)} for the heronpy topologies a
    module defines at module level."""
    from heronpy.api.topology import Topology, TopologyBuilder

    found: dict[str, tuple[Any, Any]] = {}
    for value in vars(module).values():
        if isinstance(value, type) and issubclass(value, Topology) and value is not Topology \
                and hasattr(value, "protobuf_topology"):
            found[value.protobuf_topology.name] = (value.protobuf_topology, value)
        elif isinstance(value, TopologyBuilder):
            value.build_and_submit()
            found[value.topology_name] = (_read_defn(defn_dir, value.topology_name), value)
    return found


def _read_defn(defn_dir: str, name: str) -> Any:
    from heronpy.proto import topology_pb2

    return topology_pb2.Topology.FromString(Path(defn_dir, f"{name}.defn").read_bytes())


def _defns(defn_dir: str) -> dict[str, tuple[Any, Any]]:
    from heronpy.proto import topology_pb2

    found = {}
    for path in sorted(Path(defn_dir).glob("*.defn")):
        proto = topology_pb2.Topology.FromString(path.read_bytes())
        found[proto.name] = (proto, None)
    return found


def check_classes(plan: LogicalPlan, topology: Any = None) -> None:
    """Every component's class must import as its task will import it; neither the
    topology nor a class may be one the codemod marked @unported."""
    from heronbridge.shims.heronpy.migrated import refuse_unported

    refuse_unported(f"topology {plan.name!r}", topology)
    for name, spec in plan.components.items():
        class_path = spec.config[keys.CLASS]
        module, _, attr = class_path.rpartition(".")
        try:
            found = getattr(importlib.import_module(module), attr, None) if module else None
        except Exception as exc:
            msg = (f"topology {plan.name!r}, component {name!r}: its class {class_path!r} "
                   f"cannot be imported: {type(exc).__name__}: {exc}")
            raise HeronpyError(msg) from exc
        if not isinstance(found, type):
            msg = (f"topology {plan.name!r}, component {name!r}: expected a class "
                   f"'module.Class', received {class_path!r}")
            raise HeronpyError(msg)
        refuse_unported(f"topology {plan.name!r}, component {name!r}", found)


# -- a topology file ---------------------------------------------------------------------


def preload() -> None:
    """Import heronpy's API before a user's module is imported and forgotten again
    (project_imports forgets what was imported inside it), so heronpy stays loaded once."""
    for module in ("heronpy.api.topology", "heronpy.api.bolt.bolt", "heronpy.api.spout.spout",
                   "heronpy.api.task_hook", "heronpy.api.metrics",
                   "heronbridge.shims.heronpy.extras"):
        importlib.import_module(module)


def load_file(path: str | Path, name: str | None = None,
              options: dict[str, Any] | None = None) -> LogicalPlan:
    """The heronpy topology a Python file defines: a Topology subclass or a TopologyBuilder
    at module level; failing those, the file is run as a script (as `heron submit` runs
    one) with the topology name as its first argument, and the definitions it submits
    are read. `name` picks one of several; `options` go over the topology's config."""
    from heronbridge.compat.streamparse import check_log_path, project_imports

    path = Path(path).resolve()
    where = f"topology file {str(path)!r}"
    if not path.is_file():
        msg = f"expected a topology file, received {str(path)!r} (no such file)"
        raise HeronpyError(msg)
    require_heronpy(where)
    preload()
    main_module = None
    with tempfile.TemporaryDirectory(prefix="heronpy-defn-") as defn_dir, \
            heron_options(defn_dir), project_imports(path.parent):
        found = topologies_in(import_module_file(path, where), defn_dir)
        if not found:
            _run_as_script(path, name or path.stem, where)
            found = _defns(defn_dir)
            main_module = path.stem
        if not found:
            msg = (f"{where}: expected a heronpy Topology subclass or TopologyBuilder "
                   "(or a script that submits one), found none")
            raise HeronpyError(msg)
        proto, topology = _pick(found, name, where)
        plan = file_plan(proto, options, [str(path.parent)], main_module)
        check_classes(plan, topology)
    check_log_path(plan)
    return plan


def file_plan(proto: Any, options: dict[str, Any] | None, python_path: list[str],
              main_module: str | None = None) -> LogicalPlan:
    """The plan of a topology outside a project: its own config under `options`, values
    as msgpack between tasks (a format that cannot run code) unless the config names
    another serializer; pickle, as Heron uses, carries any Python object when asked for,
    and by default for a topology built with the Streamlet API."""
    config = {rt.SERIALIZER: "pickle" if built_with_streamlets(proto) else "msgpack",
              **topology_config(proto), **(options or {})}
    return plan_from_proto(proto, config, python_path, main_module)


def built_with_streamlets(proto: Any) -> bool:
    """Whether the topology was built with the Streamlet API: its elements are whatever
    its functions return and its windows emit Window and KeyedWindow objects, so its
    values travel pickled (as on Heron) unless the config names another serializer."""
    return any(c.comp.class_name.startswith(STREAMLET_CLASSES)
               for c in (*proto.spouts, *proto.bolts))


def _run_as_script(path: Path, name: str, where: str) -> None:
    argv = sys.argv
    sys.argv = [str(path), name]
    try:
        runpy.run_path(str(path), run_name="__main__")
    except SystemExit as exc:
        if exc.code not in (None, 0):
            msg = f"{where}: run as a script (topology name {name!r}), it exited with {exc.code}"
            raise HeronpyError(msg) from exc
    except Exception as exc:
        msg = f"{where}: run as a script, it raised {type(exc).__name__}: {exc}"
        raise HeronpyError(msg) from exc
    finally:
        sys.argv = argv


def _pick(found: dict[str, tuple[Any, Any]], name: str | None, where: str) -> tuple[Any, Any]:
    if name is None and len(found) == 1:
        return next(iter(found.values()))
    if name in found:
        return found[name]
    expected = f"a topology named {name!r}" if name else "one topology (pick one with -n NAME)"
    msg = f"{where}: expected {expected}, it defines {sorted(found)}"
    raise HeronpyError(msg)


# -- a migrated streamparse project -------------------------------------------------------


def load_project(files: Any, options: dict[str, Any] | None = None,
                 resources: Path | None = None, python: str | None = None) -> Any:
    """A streamparse project (`files`: compat.streamparse.ProjectFiles) whose topology
    module defines a heronpy Topology, or None when it defines none (but perhaps a
    streamparse one). The topology is named after its file, as sparse names it; its
    config is heronpy's defaults, then the environment's options, then the Topology's
    own config, then `options`. `python`: the interpreter of the project's own
    virtualenv (virtualenvs/NAME.txt, which migration keeps), which its tasks run with
    and its classes are imported with here."""
    from heronbridge.compat.streamparse import Project, project_imports

    where = f"topology {files.name!r}"
    require_heronpy(where)
    preload()
    root, src = files.root, files.root / "src"
    resources = Path(resources or src)
    with tempfile.TemporaryDirectory(prefix="heronpy-defn-") as defn_dir, \
            heron_options(defn_dir, files.name), \
            project_imports(files.topology_file.parent, src, python=python):
        found = topologies_in(import_module_file(files.topology_file, where), defn_dir)
        if not found:
            return None
        proto, topology = _pick(found, files.name, where)
        config = _project_config(proto, topology, files, options or {})
        plan = plan_from_proto(proto, config, [str(resources), str(files.topology_file.parent)],
                               component_config={keys.RESOURCES: str(resources)})
        check_classes(plan, topology)
    if python is not None:
        plan.config[TASK_PYTHON] = python
    return Project(root, files.name, files.env, plan, src, config, topology, files.serializer)


def _project_config(proto: Any, topology: Any, files: Any, options: dict[str, Any]) -> dict:
    typed = topology_config(proto)
    own = getattr(topology, "config", None) if isinstance(topology, type) else \
        getattr(topology, "_topology_config", None)
    own_keys = set(own) if isinstance(own, dict) else set(typed)
    config = {k: v for k, v in typed.items() if k not in own_keys}  # heronpy's defaults
    env_options = dict(files.env_config.get("options") or {})
    workers = env_options.pop("topology.workers", None)
    if workers is not None:  # Storm's workers are Heron's stream managers
        env_options.setdefault(rt.CONTAINERS, workers)
    config.update(env_options)
    config.update({k: v for k, v in typed.items() if k in own_keys})
    config.update(options)
    config.setdefault(rt.SERIALIZER, files.serializer)
    return config
