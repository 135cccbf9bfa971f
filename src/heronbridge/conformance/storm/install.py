"""Apache Storm for the conformance suite: the jars the pom shipped with this package
names, resolved with Maven once per Storm version into `<home>/storm/<version>/`, plus
our own small Java extensions compiled against them.

Layout of that folder: `pom.xml` (a copy), `classpath.txt` (Maven's answer) and
`pom.sha256` (which pom it answers), `mvn.log`, `flux-core-<version>.jar`, and
`heronbridge-storm-<hash>.jar` (the extensions, named by the hash of their sources).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from .errors import StormError

PACKAGE = Path(__file__).resolve().parent.parent  # heronbridge.conformance
POM = PACKAGE / "pom.xml"
JAVA_SOURCES = PACKAGE / "java"
MIN_JAVA = 17  # Storm 2.8 runs on Java 17 and later
# flux-core cannot be resolved by Maven (see the pom), so its jar is read from the local
# Maven repository if it is there, else downloaded from this Maven repository.
REPOSITORY_ENV = "HERONBRIDGE_MAVEN_REPOSITORY"
CENTRAL = "https://repo.maven.apache.org/maven2"
MAVEN_TIMEOUT = 900.0
TAIL_LINES = 25
ANSI = re.compile(r"\x1b\[[0-9;]*m")

Log = Callable[[str], None]


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
    with _locked(directory / ".lock"):
        jars = _resolved(directory) or _resolve(directory, version, say)
        singles = [_single_jar(directory, *coordinates, say) for coordinates in single_jars()]
        extensions = _extensions(directory, java, [*jars, *singles], say)
    return StormInstall(version, [*jars, *singles, extensions], java, directory, extensions)


def find_java() -> Path:
    """The `java` of JAVA_HOME, else the one on PATH; Java 17 or later."""
    java_home = os.environ.get("JAVA_HOME")
    found = Path(java_home) / "bin" / "java" if java_home else None
    if found is None or not found.is_file():
        which = shutil.which("java")
        found = Path(which) if which else None
    if found is None:
        msg = (f"Apache Storm needs Java {MIN_JAVA} or later: expected `java` on PATH or in "
               "$JAVA_HOME/bin, found neither (e.g. apt-get install openjdk-17-jdk-headless)")
        raise StormError(msg)
    try:
        out = subprocess.run([str(found), "-version"], capture_output=True, text=True,
                             timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        msg = f"cannot run {str(found)!r} -version: {exc}"
        raise StormError(msg) from exc
    text = out.stderr + out.stdout
    major = java_major(text)
    if major is None or major < MIN_JAVA:
        first = text.strip().splitlines()[0] if text.strip() else "no output"
        msg = (f"Apache Storm needs Java {MIN_JAVA} or later: {str(found)} says {first!r}; "
               "point JAVA_HOME at a newer JDK")
        raise StormError(msg)
    return found


def java_major(version_text: str) -> int | None:
    """The major version in `java -version` output ("1.8.0_402" is 8, "17.0.15" is 17)."""
    match = re.search(r'version "(\d+)(?:\.(\d+))?', version_text)
    if not match:
        return None
    major = int(match.group(1))
    return int(match.group(2) or 0) if major == 1 else major


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """One fetch at a time per folder (two test runs may fetch at once)."""
    with path.open("a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _resolved(directory: Path) -> list[Path] | None:
    """The classpath resolved before, if it answers this pom and its jars are still there."""
    classpath, stamp = directory / "classpath.txt", directory / "pom.sha256"
    if not classpath.is_file() or not stamp.is_file() or \
            stamp.read_text().strip() != _digest(POM.read_bytes()):
        return None
    jars = [Path(p) for p in classpath.read_text().strip().split(os.pathsep) if p]
    return jars if jars and all(j.is_file() for j in jars) else None


def _resolve(directory: Path, version: str, say: Log) -> list[Path]:
    mvn = shutil.which("mvn")
    if mvn is None:
        msg = ("resolving Apache Storm needs Apache Maven: expected `mvn` on PATH, found none "
               "(e.g. apt-get install maven)")
        raise StormError(msg)
    say(f"resolving Apache Storm {version} with Maven into {directory} (once)")
    pom = directory / "pom.xml"
    shutil.copyfile(POM, pom)
    out = directory / "classpath.txt.part"
    command = [mvn, "-B", "-ntp", "-Dstyle.color=never", "-f", str(pom),
               "dependency:build-classpath", f"-Dmdep.outputFile={out}",
               f"-Dmdep.pathSeparator={os.pathsep}"]
    log_file = directory / "mvn.log"
    with log_file.open("w") as f:
        try:
            code = subprocess.run(command, cwd=directory, stdout=f, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL, timeout=MAVEN_TIMEOUT,
                                  check=False).returncode
        except subprocess.TimeoutExpired:
            code = None
    if code != 0 or not out.is_file():
        how = "timed out" if code is None else f"failed (exit code {code})"
        msg = (f"resolving Apache Storm {version} with Maven {how}: ran {' '.join(command)!r} "
               f"in {str(directory)!r}; the last lines of its output ({log_file}):\n"
               + tail(log_file))
        raise StormError(msg)
    jars = [Path(p) for p in out.read_text().strip().split(os.pathsep) if p]
    out.replace(directory / "classpath.txt")
    (directory / "pom.sha256").write_text(_digest(POM.read_bytes()) + "\n")
    return jars


def tail(path: Path, lines: int = TAIL_LINES) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:
        return f"(cannot read it: {exc})"
    text = ANSI.sub("", text)  # Maven colours its output even in batch mode
    return "\n".join(text.rstrip().splitlines()[-lines:])


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
