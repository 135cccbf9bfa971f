"""What a client submits to Nimbus, turned into the runtime's logical plan.

`sparse submit` sends a jar (the project's src/ under `resources/`), the Storm config as
JSON and a Thrift `StormTopology` whose shell components run `streamparse_run
module.Class`. Each component is read through the same translation `heronbridge run`
uses for the project itself (compat.streamparse): Python components run in their tasks'
processes, other shell components as multilang subprocesses, Java ones are refused.
"""

from __future__ import annotations

import json
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from heronbridge.compat import CompatError
from heronbridge.compat.storm_config import check_storm_options
from heronbridge.compat.streamparse import (
    STREAMPARSE_RUN,
    check_log_path,
    plan_of_specs,
    project_imports,
)
from heronbridge.runtime.errors import RuntimeKernelError, where
from heronbridge.runtime.plan.logical import LogicalPlan

from . import NimbusError

RESOURCES = "resources"
SERIALIZERS = ("json", "msgpack")


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
