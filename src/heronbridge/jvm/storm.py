"""Apache Storm's jars: what a topology's Java components run against (storm-client and
what it needs, after the JVM task host's jar and before the topology's own) and what
`storm jar` and Flux run a main class with. The pom beside this module names them
(storm-server's tree, and flux-core as a single jar), resolved by Maven once per Storm
version into `<home>/storm/<version>/`: `pom.xml` (a copy), `classpath.txt` (Maven's
answer), `pom.sha256` (which pom it answers), `mvn.log`, `flux-core-<version>.jar`."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from heronbridge.runtime.plan.logical import LogicalPlan
from heronbridge.runtime.scheduler import jvm

from . import JvmError, host, maven

POM = Path(__file__).resolve().with_name("storm-pom.xml")
NS = {"m": "http://maven.apache.org/POM/4.0.0"}


@dataclass(frozen=True)
class StormJars:
    version: str
    jars: list[Path]  # storm-server's tree, storm-client's among them
    singles: list[Path]  # the jars Maven cannot resolve (flux-core)
    java: Path
    directory: Path  # <home>/storm/<version>

    @property
    def flux(self) -> Path:
        """Storm's Flux (flux-core, shaded: its YAML reader and shell wrappers)."""
        found = [j for j in self.singles if j.name.startswith("flux-core-")]
        if not found:
            msg = f"expected flux-core's jar among Storm {self.version}'s jars, found none"
            raise JvmError(msg)
        return found[0]


def storm_version(pom: Path | None = None) -> str:
    """The pom's `storm.version` property: the one place the version is written."""
    pom = pom or POM
    node = ET.parse(pom).getroot().find("m:properties/m:storm.version", NS)
    version = (node.text or "").strip() if node is not None else ""
    if not version:
        msg = f"{str(pom)!r}: expected a storm.version property, found none"
        raise JvmError(msg)
    return version


def single_jars(pom: Path | None = None) -> list[tuple[str, str, str]]:
    """(group, artifact, version) of the jars the pom pins under dependencyManagement:
    those Maven cannot resolve (see the pom), taken one jar each."""
    pom = pom or POM
    version = storm_version(pom)
    return [(d.findtext("m:groupId", "", NS), d.findtext("m:artifactId", "", NS),
             d.findtext("m:version", "", NS).replace("${storm.version}", version))
            for d in ET.parse(pom).getroot().iterfind(
                "m:dependencyManagement/m:dependencies/m:dependency", NS)]


def find_java() -> Path:
    """The `java` of JAVA_HOME, else the one on PATH; Java 17 or later."""
    return maven.find_java("Apache Storm", JvmError)


def fetch(home: Path | None = None, log: maven.Log | None = None) -> StormJars:
    """Storm's jars: resolved with Maven on first use, then reused."""
    from heronbridge.runtime.scheduler import default_home

    say = log or (lambda text: None)
    java = find_java()
    version = storm_version()
    directory = Path(home or default_home()) / "storm" / version
    jars, singles = maven.fetch(directory, POM, f"Apache Storm {version}", JvmError, say,
                                tuple(single_jars()))
    return StormJars(version, jars, singles, java, directory)


def storm_jars(home: Path | None = None, log: maven.Log | None = None) -> list[Path]:
    """Storm's runtime jars, without Flux."""
    return fetch(home, log).jars


def flux_jar(home: Path | None = None, log: maven.Log | None = None) -> Path:
    """Storm's Flux, the version Storm's other jars have."""
    return fetch(home, log).flux


def give_classpath(plan: LogicalPlan, jars: list[Path], home: Path | None = None,
                   log: maven.Log | None = None) -> None:
    """Set the plan's Java classpath when it has Java components or Java custom groupings
    (a classpath already in its config is kept: the user's): the JVM task host's jar,
    Storm's, then `jars` (the topology's)."""
    if jvm.CLASSPATH in plan.config or not jvm.needs_jvm(plan):
        return
    plan.config[jvm.CLASSPATH] = [str(p) for p in (host.host_jar(log), *storm_jars(home, log),
                                                   *jars)]
