"""What a client submits to Nimbus, turned into the runtime's logical plan.

`sparse submit` sends a jar (the project's src/ under `resources/`), the Storm config as
JSON and a Thrift `StormTopology` whose shell components run `streamparse_run
module.Class`; `storm jar` (StormSubmitter) sends the topology's jar and components that
are Java serialized objects. Each component is read through the same translation
`heronbridge run` uses for a project (compat.streamparse): Python components run in their
tasks' processes, other shell components as multilang subprocesses, Java ones (a
JavaObject, or serialized bytes written to a file for the JVM to read) in the JVM task
host, with the uploaded jar on its classpath, then the dependency jars the StormTopology
names (`storm jar --jars/--artifacts`: blob keys in its dependency_jars and
dependency_artifacts), copied from Nimbus's blob store.
"""

from __future__ import annotations

import json
import os
import shutil
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from heronbridge.compat import CompatError
from heronbridge.compat.java import SERIALIZED_DIR, has_java
from heronbridge.compat.storm_config import check_storm_options
from heronbridge.compat.streamparse import (
    STREAMPARSE_RUN,
    check_log_path,
    plan_of_specs,
    project_imports,
)
from heronbridge.errors import HeronbridgeError
from heronbridge.runtime.errors import RuntimeKernelError, where
from heronbridge.runtime.plan.logical import LogicalPlan
from heronbridge.runtime.scheduler import jvm

from . import NimbusError

RESOURCES = "resources"
SERIALIZERS = ("json", "msgpack")
TOPOLOGY_JAR = "topology.jar"  # the uploaded jar, when its topology has Java components
DEPENDENCIES = "dependencies"  # beside it: the dependency jars, each named by its blob key
# Copies a blob (by key) into a new file; raises a NimbusError naming a missing key.
FetchBlob = Callable[[str, Path], None]
# Sets a plan's JVM classpath: the host's jar, Storm's, then the jars given.
JavaClasspath = Callable[[LogicalPlan, list[Path]], None]


class InvalidTopology(NimbusError):
    """What Nimbus answers with InvalidTopologyException."""


@dataclass(frozen=True)
class ThriftSpec:
    """A Thrift component with the fields of streamparse's ComponentSpec that compat reads."""

    name: str
    component_object: Any
    par: int
    config: str | None
    outputs: dict[str, Any]
    inputs: dict[Any, Any]


def plan_of_topology(name: str, topology: Any, conf: dict[str, Any], resources: Path,
                     staging: Path, workdir: Path | None = None) -> LogicalPlan:
    """The plan of a submitted topology. `staging`: where the jar's resources/ are now
    (its classes are imported from there to check them); `resources`: where the tasks will
    find them; `workdir`: the topology's folder (for the log path's check)."""
    if topology is None:
        msg = f"{where(name)}: expected a StormTopology, received none"
        raise InvalidTopology(msg)
    if topology.state_spouts:
        msg = (f"{where(name)}: state spouts ({sorted(topology.state_spouts)}) are not "
               "implemented by Storm either; expected none")
        raise InvalidTopology(msg)
    spouts = dict(topology.spouts or {})
    bolts = dict(topology.bolts or {})
    specs = [_spec(name, n, s.spout_object, s.common) for n, s in spouts.items()]
    specs += [_spec(name, n, b.bolt_object, b.common) for n, b in bolts.items()]
    serializer = _serializer(name, specs)
    try:
        options = check_storm_options(conf, name)
        with project_imports(staging):
            plan = plan_of_specs(name, specs, set(spouts), options, serializer, None, False,
                                 resources, staging)
        plan.validate()
    except (CompatError, RuntimeKernelError) as exc:
        raise InvalidTopology(str(exc)) from exc
    check_log_path(plan, workdir)
    return plan


def plan_of_upload(name: str, jar: Path, conf: dict[str, Any], topology: Any, workdir: Path,
                   staging: Path, java_classpath: JavaClasspath | None,
                   fetch_blob: FetchBlob | None = None) -> LogicalPlan:
    """The plan of an uploaded jar and its StormTopology: the jar's resources/ extracted
    into `staging` (moved to `workdir`/resources before the tasks start), and when it has
    Java components, the jar copied beside them and put on their classpath
    (`java_classpath`; None refuses them), then its dependency jars (`fetch_blob`)."""
    extract_resources(jar, staging, name)
    dependencies = _dependencies(name, topology, staging / SERIALIZED_DIR / DEPENDENCIES,
                                 fetch_blob)
    resources = workdir / RESOURCES
    plan = plan_of_topology(name, topology, conf, resources, staging, workdir)
    if has_java(plan):
        if java_classpath is None:
            java = sorted(c for c in plan.components if jvm.is_java(plan, c))
            grouped = sorted({c for c in plan.components for i in plan.components[c].inputs
                              if i.grouping.custom and jvm.is_java_grouping(i.grouping.custom)})
            what = (f"Java components ({', '.join(java)})" if java
                    else f"Java custom groupings (into {', '.join(grouped)})")
            msg = (f"{where(name, (java or grouped)[0])}: {what} need the JVM task host, which "
                   "was not given here; expected shell components and groupings only")
            raise InvalidTopology(msg)
        (staging / SERIALIZED_DIR).mkdir(mode=0o700, exist_ok=True)
        shutil.copyfile(jar, staging / SERIALIZED_DIR / TOPOLOGY_JAR)
        try:
            java_classpath(plan, [resources / SERIALIZED_DIR / TOPOLOGY_JAR,
                                  *(resources / SERIALIZED_DIR / DEPENDENCIES / key
                                    for key in dependencies)])
        except HeronbridgeError as exc:
            msg = f"{where(name)}: {exc}"
            raise InvalidTopology(msg) from exc
    return plan


def _dependencies(name: str, topology: Any, folder: Path,
                  fetch_blob: FetchBlob | None) -> list[str]:
    """The blob keys of the topology's dependency jars (StormSubmitter's: --jars, then
    --artifacts), each copied into `folder` under its key. A key the store lacks is named."""
    keys = [*(getattr(topology, "dependency_jars", None) or []),
            *(getattr(topology, "dependency_artifacts", None) or [])]
    if not keys:
        return []
    if fetch_blob is None:
        msg = (f"{where(name)}: it names dependency jars ({', '.join(keys)}), and no blob "
               "store was given here to take them from")
        raise InvalidTopology(msg)
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    for key in dict.fromkeys(keys):
        try:
            fetch_blob(key, folder / key)
        except NimbusError as exc:
            msg = (f"{where(name)}: its dependency jar {key!r} (StormTopology's "
                   f"dependency_jars/dependency_artifacts) cannot be taken from Nimbus's blob "
                   f"store: {exc}")
            raise InvalidTopology(msg) from exc
        except OSError as exc:
            msg = f"{where(name)}: its dependency jar {key!r} cannot be copied: {exc}"
            raise InvalidTopology(msg) from exc
    return list(dict.fromkeys(keys))


def _spec(topology: str, name: str, obj: Any, common: Any) -> ThriftSpec:
    loc = where(topology, name)
    if obj is None or common is None:
        msg = f"{loc}: expected a component object and its common part, received {obj!r}"
        raise InvalidTopology(msg)
    shell = obj.shell
    if shell is not None:
        # sparse points streamparse_run into the topology's virtualenv when it uses one.
        command = shell.execution_command or ""
        if os.path.basename(command) == STREAMPARSE_RUN:
            command = STREAMPARSE_RUN
        shell = type(shell)(execution_command=command, script=shell.script or "")
        obj = type(obj)(shell=shell)
    elif obj.java_object is None and obj.serialized_java is None:
        msg = f"{loc}: expected a shell or Java component object, received none"
        raise InvalidTopology(msg)
    par = common.parallelism_hint
    return ThriftSpec(name, obj, 1 if par is None else par, common.json_conf,
                      dict(common.streams or {}), dict(common.inputs or {}))


def _serializer(topology: str, specs: list[ThriftSpec]) -> str:
    """The multilang serializer sparse put in front of each streamparse_run class
    (`-s msgpack mod.Class`): one for the whole topology, json when none is named."""
    found = set()
    for spec in specs:
        shell = spec.component_object.shell
        words = (shell.script or "").split() if shell is not None else []
        if "-s" in words[:-1]:
            found.add(words[words.index("-s") + 1])
    if not found:
        return "json"
    if len(found) > 1 or not found <= set(SERIALIZERS):
        msg = (f"{where(topology)}: expected one multilang serializer (json or msgpack) for "
               f"every component, received {sorted(found)}")
        raise InvalidTopology(msg)
    return found.pop()


def extract_resources(jar: Path, target: Path, topology: str) -> int:
    """Extract the jar's `resources/` (the project's src/) into `target`, as Storm's
    supervisor does; returns the number of files. Entries that would land outside
    `target` are refused."""
    target.mkdir(parents=True, exist_ok=True)
    count = 0
    try:
        with zipfile.ZipFile(jar) as z:
            for info in z.infolist():
                parts = PurePosixPath(info.filename).parts
                if len(parts) < 2 or parts[0] != RESOURCES:
                    continue
                if info.filename.startswith("/") or ".." in parts or "\\" in info.filename:
                    msg = (f"{where(topology)}: the jar's entry {info.filename!r} would "
                           "leave its resources/ folder; expected relative paths")
                    raise InvalidTopology(msg)
                path = target.joinpath(*parts[1:])
                if info.is_dir():
                    path.mkdir(parents=True, exist_ok=True)
                    continue
                path.parent.mkdir(parents=True, exist_ok=True)
                with z.open(info) as src, path.open("wb") as dst:
                    while chunk := src.read(1 << 20):
                        dst.write(chunk)
                count += 1
    except (zipfile.BadZipFile, OSError) as exc:
        msg = f"{where(topology)}: the uploaded jar cannot be read as a zip file: {exc}"
        raise InvalidTopology(msg) from exc
    return count


def conf_of(json_conf: str | None, topology: str) -> dict[str, Any]:
    """The topology's Storm config, as the client sent it (a JSON object)."""
    try:
        conf = json.loads(json_conf) if json_conf else {}
    except (json.JSONDecodeError, TypeError) as exc:
        msg = f"{where(topology)}: its config is not valid JSON: {exc}"
        raise InvalidTopology(msg) from exc
    if not isinstance(conf, dict):
        msg = f"{where(topology)}: expected its config as a JSON object, received {conf!r:.80}"
        raise InvalidTopology(msg)
    return conf
