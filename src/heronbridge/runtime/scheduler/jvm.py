"""A Java task's command line: one JVM running the JVM task host (`jvm/`), whose main
takes the Python instance's arguments, with the options Heron's resource keys give its
component.

A component is a Java one when its own config names its Java object
(`heronbridge.java.component`); the topology's config lists the JVM's classpath
(`heronbridge.java.classpath`: the host's jar, Storm's and the topology's, in that
order), which the loader that made the plan fills in.

JVM options, later ones winning where they overlap (the JVM reads the last -Xmx):
the host's defaults, `-Xmx` from the component's RAM (`topology.component.rammap`, as
Heron sizes an instance's heap), `topology.worker.childopts` (every Java task), then the
component's own `topology.component.jvmopts`: `{component: options}`, or Heron's
`Config.setComponentJvmOptions` text (a JSON object whose keys and values are base64).
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import shlex
from typing import Any

from ..errors import ConfigError, where
from ..plan.java import (  # noqa: F401 - the scheduler's names for them too
    CLASSPATH,
    COMPONENT,
    JAVA,
    classpath,
    is_java,
    is_java_grouping,
    java_command,
    needs_jvm,
)
from ..plan.logical import LogicalPlan
from ..plan.packing import RAM_MAP, component_map

WORKER_CHILDOPTS = "topology.worker.childopts"
COMPONENT_JVMOPTS = "topology.component.jvmopts"
MAIN = "heronbridge.jvm.TaskHost"
# A JVM that ran out of memory is broken: exit, and the executor restarts it as any task.
DEFAULT_OPTIONS = ("-XX:+UseSerialGC", "-XX:+ExitOnOutOfMemoryError")
MIB = 1 << 20


def _options(value: Any, key: str, plan: LogicalPlan, component: str | None) -> list[str]:
    if value is None or value == "":
        return []
    if isinstance(value, str):
        return shlex.split(value)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    msg = (f"{where(plan.name, component)}: config {key!r} expects JVM options as a string "
           f"or a list of strings, received {value!r}")
    raise ConfigError(msg)


def component_jvmopts(plan: LogicalPlan) -> dict[str, Any]:
    """{component: options} from either form of `topology.component.jvmopts`."""
    raw = plan.config.get(COMPONENT_JVMOPTS)
    if raw is None or raw == "":
        return {}
    if isinstance(raw, dict):
        return raw
    try:
        encoded = json.loads(raw) if isinstance(raw, str) else None
        if not isinstance(encoded, dict):
            raise TypeError
        return {base64.b64decode(k, validate=True).decode():
                base64.b64decode(v, validate=True).decode() for k, v in encoded.items()}
    except (ValueError, TypeError, binascii.Error) as exc:
        msg = (f"{where(plan.name)}: config {COMPONENT_JVMOPTS!r} expects {{component: "
               "options}} or Heron's text (a JSON object of base64 component names and "
               f"options), received {raw!r}")
        raise ConfigError(msg) from exc


def jvm_options(plan: LogicalPlan, component: str) -> list[str]:
    opts = list(DEFAULT_OPTIONS)
    ram = component_map(plan, RAM_MAP).get(component)
    if ram is not None:
        opts.append(f"-Xmx{max(1, int(ram) // MIB)}m")
    conf = plan.component_config(component)
    opts += _options(conf.get(WORKER_CHILDOPTS), WORKER_CHILDOPTS, plan, component)
    opts += _options(component_jvmopts(plan).get(component), COMPONENT_JVMOPTS, plan,
                     component)
    return opts


def task_command(plan: LogicalPlan, component: str, args: list[str],
                 code_dir: str) -> list[str]:
    """The JVM's argv for one task of `component`: `args` are the Python instance's."""
    return [java_command(plan), *jvm_options(plan, component), "-cp",
            os.pathsep.join(classpath(plan)), MAIN, *args, "--code-dir", code_dir]
