"""The JVM task host's jar built from the Maven project of a checkout (`jvm/`): while a
wheel builds (setup.py puts it in the wheel), on first use in an editable install
(host.py), and by `python scripts/build_jvm_host.py`. The standard library only: setup.py
imports this module before heronbridge's dependencies are installed.

Each build is stamped with the digest of what it was built from (jvm/'s pom and sources,
the runtime's .proto files and the link protocol's vectors its tests read) and whether its
tests ran, so an unchanged checkout reuses its jar and a changed one builds again."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from . import JvmError, maven

JAR = "heronbridge-jvm-host.jar"
TESTED = "tested"
MAVEN_TIMEOUT = 1800.0  # the host's tests included, on a loaded machine
TAIL_LINES = 40


def project(checkout: Path) -> Path:
    return checkout / "jvm"


def target(checkout: Path) -> Path:
    return project(checkout) / "target"


def inputs(checkout: Path) -> list[Path]:
    """Every file the jar and its tests are built from."""
    proto = checkout / "src" / "heronbridge" / "runtime" / "proto"
    files = [project(checkout) / "pom.xml", *(project(checkout) / "src").rglob("*"),
             *proto.glob("*.proto"),
             checkout / "src" / "heronbridge" / "runtime" / "wire" / "protocol_vectors.json"]
    return sorted(f for f in files if f.is_file())


def digest(checkout: Path) -> str:
    h = hashlib.sha256()
    for path in inputs(checkout):
        data = path.read_bytes()
        h.update(f"{path.relative_to(checkout)}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()


def _stamp(checkout: Path) -> Path:
    return target(checkout) / f"{JAR}.sha256"


def built(checkout: Path, tested: bool = False) -> Path | None:
    """The jar already built from these sources (with its tests run, when `tested`)."""
    jar, stamp = target(checkout) / JAR, _stamp(checkout)
    if not jar.is_file() or not stamp.is_file():
        return None
    words = stamp.read_text().split()
    if not words or words[0] != digest(checkout) or (tested and TESTED not in words[1:]):
        return None
    return jar


def build(checkout: Path, tests: bool, say: Callable[[str], None],
          vectors: Path | None = None) -> Path:
    """Run `mvn package` on jvm/ (its unit tests too, when `tests`); the jar it made."""
    mvn = shutil.which("mvn")
    if mvn is None:
        msg = ("building the JVM task host needs Apache Maven and Java 17 or later: expected "
               "`mvn` on PATH, found none (e.g. apt-get install maven openjdk-17-jdk-headless)")
        raise JvmError(msg)
    pom = project(checkout) / "pom.xml"
    command = [mvn, "-B", "-ntp", "-Dstyle.color=never", "-f", str(pom), "package"]
    if not tests:
        command.append("-DskipTests")
    if vectors is not None:
        command.append(f"-Dheronbridge.vectors={vectors.resolve()}")
    source = digest(checkout)
    target(checkout).mkdir(parents=True, exist_ok=True)
    log = target(checkout) / "mvn-build.log"
    say(f"building the JVM task host with Maven{' and its tests' if tests else ''} "
        f"(once for these sources; about a minute): {pom}")
    with log.open("w") as out:
        try:
            code = subprocess.run(command, cwd=project(checkout), stdout=out,
                                  stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                  timeout=MAVEN_TIMEOUT, check=False).returncode
        except subprocess.TimeoutExpired:
            code = None
    jar = target(checkout) / JAR
    if code != 0 or not jar.is_file():
        how = "timed out" if code is None else f"failed (exit code {code})"
        lines = log.read_text(errors="replace").rstrip().splitlines()[-TAIL_LINES:]
        msg = (f"building the JVM task host {how}: ran {' '.join(command)!r}; the last "
               f"lines of its output ({log}):\n" + "\n".join(lines))
        raise JvmError(msg)
    tested = tests and vectors is None  # its tests passed on the runtime's own vectors
    _stamp(checkout).write_text(f"{source}{' ' + TESTED if tested else ''}\n")
    return jar


def ensure(checkout: Path, tests: bool, say: Callable[[str], None]) -> Path:
    """The jar of these sources: reused when built before, else built now (one build at
    a time per checkout: tasks and test workers may ask at once)."""
    target(checkout).mkdir(parents=True, exist_ok=True)
    with maven.locked(target(checkout) / ".build.lock"):
        return built(checkout, tests) or build(checkout, tests, say)


def checkout_of(package: Path) -> Path | None:
    """The checkout a package folder (src/heronbridge) was installed from in editable mode:
    the folder that holds jvm/pom.xml beside src/, else None (an installed wheel)."""
    checkout = package.resolve().parent.parent
    return checkout if (project(checkout) / "pom.xml").is_file() and \
        (checkout / "src").is_dir() else None
