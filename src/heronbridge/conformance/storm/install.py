"""Apache Storm for the conformance suite: the jars the pom shipped with this package
names, resolved with Maven once per Storm version into `<home>/storm/<version>/`, plus
our own small Java extensions compiled against them.

Layout of that folder: `pom.xml` (a copy), `classpath.txt` (Maven's answer) and
`pom.sha256` (which pom it answers), `mvn.log`, `flux-core-<version>.jar`, and
`heronbridge-storm-<hash>.jar` (the extensions, named by the hash of their sources).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET
import zipfile
from dataclasses import dataclass
from pathlib import Path

from .. import maven
from ..maven import MIN_JAVA, Log, java_major
from .errors import StormError

__all__ = ["StormInstall", "fetch", "find_java", "java_major", "single_jars", "storm_version"]

PACKAGE = Path(__file__).resolve().parent.parent  # heronbridge.conformance
POM = PACKAGE / "pom.xml"
JAVA_SOURCES = PACKAGE / "java"
# flux-core cannot be resolved by Maven (see the pom), so its jar is read from the local
# Maven repository if it is there, else downloaded from this Maven repository.
REPOSITORY_ENV = "HERONBRIDGE_MAVEN_REPOSITORY"
CENTRAL = "https://repo.maven.apache.org/maven2"


@dataclass(frozen=True)
class StormInstall:
    version: str
    classpath: list[Path]  # every jar a Storm run needs after the topology's own jar
    java: Path
    directory: Path  # <home>/storm/<version>
    extensions: Path  # our compiled Java classes (DirectShellBolt and friends), a jar


NS = {"m": "http://maven.apache.org/POM/4.0.0"}


def storm_version(pom: Path | None = None) -> str:
    """The pom's `storm.version` property: the one place the version is written."""
    pom = pom or POM
    node = ET.parse(pom).getroot().find("m:properties/m:storm.version", NS)
    if node is None or not (node.text or "").strip():
        msg = f"{str(pom)!r}: expected a storm.version property, found none"
        raise StormError(msg)
    return node.text.strip()


def single_jars(pom: Path | None = None) -> list[tuple[str, str, str]]:
    """(group, artifact, version) of the jars the pom pins under dependencyManagement:
    those Maven cannot resolve (see the pom), taken one jar each."""
    pom = pom or POM
    version = storm_version(pom)
    return [(d.findtext("m:groupId", "", NS), d.findtext("m:artifactId", "", NS),
             d.findtext("m:version", "", NS).replace("${storm.version}", version))
            for d in ET.parse(pom).getroot().iterfind(
                "m:dependencyManagement/m:dependencies/m:dependency", NS)]


def fetch(home: Path | None = None, log: Log | None = None) -> StormInstall:
    """Storm's jars for local-mode runs: resolved with Maven on first use, then reused."""
    from heronbridge.runtime.scheduler import default_home

    say = log or (lambda text: None)
    java = find_java()
    version = storm_version()
    directory = Path(home or default_home()) / "storm" / version
    directory.mkdir(parents=True, exist_ok=True)
    with maven.locked(directory / ".lock"):
        jars = _resolved(directory) or _resolve(directory, version, say)
        singles = [_single_jar(directory, *coordinates, say) for coordinates in single_jars()]
        extensions = _extensions(directory, java, [*jars, *singles], say)
    return StormInstall(version, [*jars, *singles, extensions], java, directory, extensions)


def find_java() -> Path:
    """The `java` of JAVA_HOME, else the one on PATH; Java 17 or later."""
    return maven.find_java("Apache Storm", StormError)


def _resolved(directory: Path) -> list[Path] | None:
    return maven.resolved(directory, POM)


def _resolve(directory: Path, version: str, say: Log) -> list[Path]:
    return maven.resolve(directory, POM, f"Apache Storm {version}", StormError, say)


def _single_jar(directory: Path, group: str, artifact: str, version: str, say: Log) -> Path:
    name = f"{artifact}-{version}.jar"
    jar = directory / name
    if jar.is_file():
        return jar
    layout = f"{group.replace('.', '/')}/{artifact}/{version}/{name}"
    local = Path.home() / ".m2" / "repository" / layout
    if local.is_file():
        shutil.copyfile(local, jar)
        return jar
    repository = os.environ.get(REPOSITORY_ENV) or CENTRAL
    url = f"{repository.rstrip('/')}/{layout}"
    say(f"downloading {url}")
    part = directory / (name + ".part")
    try:
        with urllib.request.urlopen(url + ".sha1", timeout=60) as r:
            expected = r.read().decode().split()[0].strip().lower()
        with urllib.request.urlopen(url, timeout=300) as r, part.open("wb") as f:
            shutil.copyfileobj(r, f)
    except (urllib.error.URLError, OSError, IndexError) as exc:
        msg = (f"downloading {artifact} {version} for Apache Storm failed: GET {url}: {exc} (set "
               f"{REPOSITORY_ENV} to a Maven repository this machine reaches)")
        raise StormError(msg) from exc
    got = hashlib.sha1(part.read_bytes()).hexdigest()
    if got != expected:
        part.unlink()
        msg = f"downloading {url}: expected SHA-1 {expected}, received a file with {got}"
        raise StormError(msg)
    part.replace(jar)
    return jar


def _java_sources() -> list[Path]:
    return sorted(JAVA_SOURCES.rglob("*.java"))


def _extensions(directory: Path, java: Path, classpath: list[Path], say: Log) -> Path:
    """Our Java classes, compiled against this Storm; recompiled when a source changes."""
    sources = _java_sources()
    h = hashlib.sha256(directory.name.encode())
    for source in sources:
        h.update(str(source.relative_to(JAVA_SOURCES)).encode() + b"\0" + source.read_bytes())
    jar = directory / f"heronbridge-storm-{h.hexdigest()[:12]}.jar"
    if jar.is_file():
        return jar
    javac = Path(os.path.realpath(java)).parent / "javac"
    if not javac.is_file():
        which = shutil.which("javac")
        if which is None:
            msg = (f"compiling the suite's Storm extensions needs a JDK: expected `javac` next "
                   f"to {str(java)!r} or on PATH, found neither")
            raise StormError(msg)
        javac = Path(which)
    say(f"compiling {len(sources)} Java sources for Storm {directory.name}")
    with tempfile.TemporaryDirectory(dir=directory) as tmp:
        classes = Path(tmp) / "classes"
        command = [str(javac), "--release", str(MIN_JAVA), "-nowarn", "-encoding", "UTF-8",
                   "-d", str(classes), "-cp", os.pathsep.join(map(str, classpath)),
                   *map(str, sources)]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            msg = (f"compiling the suite's Storm extensions failed (exit code "
                   f"{done.returncode}): {done.stdout}{done.stderr}")
            raise StormError(msg)
        part = Path(tmp) / jar.name
        with zipfile.ZipFile(part, "w", zipfile.ZIP_DEFLATED) as z:
            for path in sorted(classes.rglob("*.class")):
                z.write(path, path.relative_to(classes).as_posix())
        for old in directory.glob("heronbridge-storm-*.jar"):
            old.unlink()
        part.replace(jar)
    return jar
