"""Java programs from Maven Central's jars (Apache Storm, an Apache Kafka broker): the
`java` to run them with, a pom's dependencies resolved by Maven once into a classpath file
kept beside a copy of the pom and its digest, and single jars Maven cannot resolve, taken
from a Maven repository's layout and checked against its SHA-1."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

MIN_JAVA = 17  # Storm 2.8 and Kafka 4 run on Java 17 and later
MAVEN_TIMEOUT = 900.0
TAIL_LINES = 25
ANSI = re.compile(r"\x1b\[[0-9;]*m")
# Single jars are read from the local Maven repository if they are there, else downloaded
# from this Maven repository.
REPOSITORY_ENV = "HERONBRIDGE_MAVEN_REPOSITORY"
CENTRAL = "https://repo.maven.apache.org/maven2"

Log = Callable[[str], None]


def find_java(what: str, error: type[Exception]) -> Path:
    """The `java` of JAVA_HOME, else the one on PATH; Java 17 or later (`what` needs it:
    "Apache Storm"), else `error`."""
    java_home = os.environ.get("JAVA_HOME")
    found = Path(java_home) / "bin" / "java" if java_home else None
    if found is None or not found.is_file():
        which = shutil.which("java")
        found = Path(which) if which else None
    if found is None:
        msg = (f"{what} needs Java {MIN_JAVA} or later: expected `java` on PATH or in "
               "$JAVA_HOME/bin, found neither (e.g. apt-get install openjdk-17-jdk-headless)")
        raise error(msg)
    try:
        out = subprocess.run([str(found), "-version"], capture_output=True, text=True,
                             timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        msg = f"cannot run {str(found)!r} -version: {exc}"
        raise error(msg) from exc
    text = out.stderr + out.stdout
    major = java_major(text)
    if major is None or major < MIN_JAVA:
        first = text.strip().splitlines()[0] if text.strip() else "no output"
        msg = (f"{what} needs Java {MIN_JAVA} or later: {str(found)} says {first!r}; "
               "point JAVA_HOME at a newer JDK")
        raise error(msg)
    return found


def java_major(version_text: str) -> int | None:
    """The major version in `java -version` output ("1.8.0_402" is 8, "17.0.15" is 17)."""
    match = re.search(r'version "(\d+)(?:\.(\d+))?', version_text)
    if not match:
        return None
    major = int(match.group(1))
    return int(match.group(2) or 0) if major == 1 else major


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """One holder at a time of the lock file `path` (two test runs may fetch or build at
    once); the standard library only, as build.py needs."""
    with path.open("a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def resolved(directory: Path, pom: Path) -> list[Path] | None:
    """The classpath resolved before, if it answers this pom and its jars are still there."""
    classpath, stamp = directory / "classpath.txt", directory / "pom.sha256"
    if not classpath.is_file() or not stamp.is_file() or \
            stamp.read_text().strip() != digest(pom.read_bytes()):
        return None
    jars = [Path(p) for p in classpath.read_text().strip().split(os.pathsep) if p]
    return jars if jars and all(j.is_file() for j in jars) else None


def resolve(directory: Path, pom: Path, what: str, error: type[Exception],
            say: Log) -> list[Path]:
    """Every jar `pom`'s dependencies need, resolved by Maven into `directory`
    (classpath.txt, pom.sha256, mvn.log); `what` names it ("Apache Storm 2.8.3")."""
    mvn = shutil.which("mvn")
    if mvn is None:
        name = what.rsplit(" ", 1)[0]
        msg = (f"resolving {name} needs Apache Maven: expected `mvn` on PATH, found none "
               "(e.g. apt-get install maven)")
        raise error(msg)
    say(f"resolving {what} with Maven into {directory} (once)")
    copy = directory / "pom.xml"
    shutil.copyfile(pom, copy)
    out = directory / "classpath.txt.part"
    command = [mvn, "-B", "-ntp", "-Dstyle.color=never", "-f", str(copy),
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
        msg = (f"resolving {what} with Maven {how}: ran {' '.join(command)!r} "
               f"in {str(directory)!r}; the last lines of its output ({log_file}):\n"
               + tail(log_file))
        raise error(msg)
    jars = [Path(p) for p in out.read_text().strip().split(os.pathsep) if p]
    out.replace(directory / "classpath.txt")
    (directory / "pom.sha256").write_text(digest(pom.read_bytes()) + "\n")
    return jars


def fetch(directory: Path, pom: Path, what: str, error: type[Exception], say: Log,
          singles: tuple[tuple[str, str, str], ...] = ()) -> tuple[list[Path], list[Path]]:
    """`pom`'s jars resolved into `directory` on first use, then reused, and the single
    jars `singles` names (group, artifact, version): one fetch at a time per folder."""
    directory.mkdir(parents=True, exist_ok=True)
    with locked(directory / ".lock"):
        jars = resolved(directory, pom) or resolve(directory, pom, what, error, say)
        taken = [single_jar(directory, *coordinates, what.rsplit(" ", 1)[0], error, say)
                 for coordinates in singles]
    return jars, taken


def tail(path: Path, lines: int = TAIL_LINES) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:
        return f"(cannot read it: {exc})"
    text = ANSI.sub("", text)  # Maven colours its output even in batch mode
    return "\n".join(text.rstrip().splitlines()[-lines:])


def single_jar(directory: Path, group: str, artifact: str, version: str, what: str,
               error: type[Exception], say: Log) -> Path:
    """One jar by its coordinates, copied into `directory` once: from the local Maven
    repository when it is there, else from $HERONBRIDGE_MAVEN_REPOSITORY (Maven Central
    by default), checked against the repository's SHA-1; `what` needs it ("Apache Storm")."""
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
        msg = (f"downloading {artifact} {version} for {what} failed: GET {url}: {exc} (set "
               f"{REPOSITORY_ENV} to a Maven repository this machine reaches)")
        raise error(msg) from exc
    got = hashlib.sha1(part.read_bytes()).hexdigest()
    if got != expected:
        part.unlink()
        msg = f"downloading {url}: expected SHA-1 {expected}, received a file with {got}"
        raise error(msg)
    part.replace(jar)
    return jar
