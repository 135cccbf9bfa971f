"""The classpath of a topology's Java tasks on the runtime: the JVM task host's jar, then
Storm's jars as Maven resolves them for the suite (install.py: storm-client and what it
needs, the Storm version the conformance runs use), then the topology's own jars."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from heronbridge.runtime.plan.logical import LogicalPlan
from heronbridge.runtime.scheduler import jvm

from . import install
from .errors import StormError

HOST_JAR_ENV = "HERONBRIDGE_JVM_HOST"
# Where `python scripts/build_jvm_host.py` (or `tox -e conformance`) leaves it in a checkout.
BUILT_JAR = Path(__file__).resolve().parents[4] / "jvm" / "target" / "heronbridge-jvm-host.jar"


def host_jar() -> Path:
    """$HERONBRIDGE_JVM_HOST, else the jar built in this checkout."""
    named = os.environ.get(HOST_JAR_ENV)
    jar = Path(named) if named else BUILT_JAR
    if not jar.is_file():
        msg = (f"Java components run in the JVM task host: expected its jar at {str(jar)!r} "
               f"(${HOST_JAR_ENV}, or build it with `python scripts/build_jvm_host.py`), "
               "found none")
        raise StormError(msg)
    return jar


def storm_jars(home: Path | None = None, log: Callable[[str], None] | None = None) -> list[Path]:
    """Storm's runtime jars, without the suite's own extensions and Flux."""
    storm = install.fetch(home, log)
    return [j for j in storm.classpath
            if j != storm.extensions and not j.name.startswith("flux-")]


def flux_jar(home: Path | None = None, log: Callable[[str], None] | None = None) -> Path:
    """Storm's Flux (flux-core, shaded: its YAML reader and shell wrappers), the version the
    suite resolves."""
    storm = install.fetch(home, log)
    found = [j for j in storm.classpath if j.name.startswith("flux-core-")]
    if not found:
        msg = f"expected flux-core's jar among Storm {storm.version}'s jars, found none"
        raise StormError(msg)
    return found[0]


def give_classpath(plan: LogicalPlan, jars: list[Path], home: Path | None = None,
                   log: Callable[[str], None] | None = None) -> None:
    """Set the plan's Java classpath when it has Java components or Java custom groupings
    (a classpath already in its config is kept: the user's)."""
    if jvm.CLASSPATH in plan.config or not jvm.needs_jvm(plan):
        return
    plan.config[jvm.CLASSPATH] = [str(p) for p in (host_jar(), *storm_jars(home, log), *jars)]
