"""What a plan says of Java: which components run in the JVM task host, which custom
groupings are Java objects, and the JVM (command, classpath) both run in. Here, below the
instance and the scheduler, because a Python task starts a JVM too: the one that runs its
Java custom groupings (instance/java_groupings.py)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from ..errors import ConfigError, SchedulerError, where
from .logical import CUSTOM, LogicalPlan

COMPONENT = "heronbridge.java.component"  # {"class": ..., "args": [...]} (the host's ComponentSpec)
CLASSPATH = "heronbridge.java.classpath"  # [path, ...] or a path list joined by ':'
JAVA = "heronbridge.java.command"  # the `java` to run; default: $JAVA_HOME/bin/java, else PATH's


def is_java(plan: LogicalPlan, component: str) -> bool:
    return COMPONENT in plan.components[component].config


def is_java_grouping(custom: str | None) -> bool:
    """Whether a custom grouping's text is the host's spec of a Java object (a JSON
    object) rather than a Python callable's import path."""
    return bool(custom) and custom.lstrip().startswith("{")  # type: ignore[union-attr]


def java_groupings(plan: LogicalPlan, sender: str) -> list[tuple[str, str]]:
    """(stream, subscriber) of every Java custom grouping on `sender`'s streams."""
    return sorted((inp.stream, name) for name, spec in plan.components.items()
                  for inp in spec.inputs if inp.component == sender and
                  inp.grouping.kind == CUSTOM and is_java_grouping(inp.grouping.custom))


def needs_jvm(plan: LogicalPlan) -> bool:
    """Whether any task of the plan starts a JVM: a Java component's, or a task whose
    stream has a Java custom grouping."""
    return any(is_java(plan, c) for c in plan.components) or \
        any(inp.grouping.kind == CUSTOM and is_java_grouping(inp.grouping.custom)
            for spec in plan.components.values() for inp in spec.inputs)


def classpath(plan: LogicalPlan) -> list[str]:
    raw = plan.config.get(CLASSPATH)
    entries = raw.split(os.pathsep) if isinstance(raw, str) else raw
    if not isinstance(entries, list) or not entries or \
            not all(isinstance(e, str) and e for e in entries):
        msg = (f"{where(plan.name)}: its Java components and groupings need config "
               f"{CLASSPATH!r}, the JVM task host's classpath (a list of jars and folders), "
               f"received {raw!r}")
        raise ConfigError(msg)
    return entries


def java_command(plan: LogicalPlan) -> str:
    configured = plan.config.get(JAVA)
    if isinstance(configured, str) and configured:
        return configured
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").is_file():
        return str(Path(home) / "bin" / "java")
    found = shutil.which("java")
    if found is None:
        msg = (f"{where(plan.name)}: its Java components and groupings need a JVM: expected "
               f"`java` on PATH, in $JAVA_HOME/bin or in config {JAVA!r}, found none")
        raise SchedulerError(msg)
    return found
