"""The Flux YAML a conformance run submits: streamparse's own `to_flux_dict`, changed only
where a run on Storm's local mode needs it.

- options: the project's, resolved as `sparse run` does (scenario's included), with
  message timeouts on (LocalCluster turns them off), plain round-robin shuffle, one
  worker, and the tracing hook's trace folder, faults, bound and seed;
- commands: `streamparse_run` gets `-s <serializer>` as `sparse run` gives it and runs
  with the tracing hook inside (`trace.traced_run`); any other shell component runs
  under the tracing proxy;
- Java components: run inside the tracing wrapper (trace/java.py), with the parallelism
  the spec gives (streamparse's Flux text leaves a Java component's out: Flux's default
  is one task, Storm's Thrift submission gives the spec's);
- direct streams: Flux's shell wrappers declare every stream regular, so a component with
  a stream declared direct gets our wrapper that declares it direct, and the topology our
  serializer that reads multilang direct emits (see conformance/java).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from heronbridge.runtime.scheduler import jvm

from ..scenario import Scenario
from ..trace import java, schema
from ..trace.proxy import proxy_argv
from ..trace.traced_run import traced_argv
from .errors import StormError

FLUX_SHELL_BOLT = "org.apache.storm.flux.wrappers.bolts.FluxShellBolt"
FLUX_SHELL_SPOUT = "org.apache.storm.flux.wrappers.spouts.FluxShellSpout"
DIRECT_SHELL_BOLT = "heronbridge.storm.DirectShellBolt"
DIRECT_SHELL_SPOUT = "heronbridge.storm.DirectShellSpout"
DIRECT_WRAPPERS = {FLUX_SHELL_BOLT: DIRECT_SHELL_BOLT, FLUX_SHELL_SPOUT: DIRECT_SHELL_SPOUT}
SET_DIRECT_STREAM = "setDirectStream"
DIRECT_EMIT_SERIALIZER = "heronbridge.storm.DirectEmitJsonSerializer"
MULTILANG_SERIALIZER = "topology.multilang.serializer"
STREAMPARSE_RUN = "streamparse_run"

# Set on every run, over the project's options.
RUN_OPTIONS: dict[str, Any] = {
    "topology.enable.message.timeouts": True,  # LocalCluster's default is false
    "topology.disable.loadaware.messaging": True,  # shuffle: round robin, as documented
    "topology.workers": 1,
}


def flux_topology(project: Any, scenario: Scenario, traces: Path,
                  trace: bool = True) -> dict[str, Any]:
    """The Flux topology for `project` (a compat.streamparse.Project loaded with the
    scenario's options). `trace`: run every shell component under the tracing hook."""
    where = f"topology {project.name!r}"
    if project.serializer != "json":
        msg = (f"{where}: the project's serializer is {project.serializer!r}, but Storm "
               "speaks JSON to multilang components unless topology.multilang.serializer "
               "names a Java serializer for it, and none is on the suite's Storm classpath; "
               "expected serializer 'json' for a run on Storm")
        raise StormError(msg)
    flux = copy.deepcopy(project.topology.to_flux_dict(project.name))
    direct = {name: sorted(s.name for s in spec.outputs.values() if s.direct)
              for name, spec in project.plan.components.items()}
    flux["config"] = run_config(project.options, scenario, traces,
                                uses_direct=any(direct.values()))
    for component in [*flux.get("spouts", []), *flux.get("bolts", [])]:
        spec = project.plan.components.get(component["id"])
        java_spec = spec.config.get(jvm.COMPONENT) if spec is not None else None
        if java_spec is not None:
            component["parallelism"] = spec.parallelism
            if trace:
                component["className"] = java.TRACED_SPOUT if spec.is_spout else \
                    java.TRACED_BOLT
                component["constructorArgs"] = [json.dumps(java_spec),
                                                java.options(flux["config"])]
            continue
        _shell_component(where, component, project.serializer, trace,
                         direct.get(component["id"], []))
    return flux


def run_config(options: dict[str, Any], scenario: Scenario, traces: Path,
               uses_direct: bool = False) -> dict[str, Any]:
    config = {**options, **RUN_OPTIONS, schema.TRACE_DIR: str(traces),
              schema.FAULTS: [dict(f) for f in scenario.faults],
              schema.BOUND: scenario.bound()}
    if scenario.seed is not None:
        config[schema.SEED] = scenario.seed
    if uses_direct:
        # A serializer the user chose stays; the log check explains what it may do.
        config.setdefault(MULTILANG_SERIALIZER, DIRECT_EMIT_SERIALIZER)
    return config


def _shell_component(where: str, component: dict[str, Any], serializer: str, trace: bool,
                     direct_streams: list[str]) -> None:
    if component.get("className") not in DIRECT_WRAPPERS:
        return  # a Java component: Storm runs it as it is
    args = component["constructorArgs"]
    argv = [str(a) for a in args[0]]
    if len(argv) < 2:
        msg = (f"{where}, component {component['id']!r}: expected a shell command and its "
               f"script in the Flux constructor arguments, received {args[0]!r}")
        raise StormError(msg)
    if argv[0] == STREAMPARSE_RUN and "-s" not in argv[1].split():
        # `sparse run` prefixes every shell script; a plain command (`python x.py`) would
        # then read `-s json` as its own options, so only streamparse_run gets it here.
        argv[1] = f"-s {serializer} {argv[1]}"
    if trace:
        argv = traced_argv(argv[1:]) if argv[0] == STREAMPARSE_RUN else \
            proxy_argv(argv, serializer)
    args[0] = argv
    if direct_streams:
        component["className"] = DIRECT_WRAPPERS[component["className"]]
        component.setdefault("configMethods", []).extend(
            {"name": SET_DIRECT_STREAM, "args": [stream]} for stream in direct_streams)


def write_flux(flux: dict[str, Any], path: Path) -> Path:
    import yaml

    path.write_text(yaml.safe_dump(flux, sort_keys=False, default_flow_style=False))
    return path
