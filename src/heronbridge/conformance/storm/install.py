"""Apache Storm for the conformance suite: Storm's jars as the product resolves them
(heronbridge.jvm.storm: `<home>/storm/<version>/`), plus the suite's own small Java
extensions compiled against them, `heronbridge-storm-<hash>.jar` in the same folder
(named by the hash of their sources).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from heronbridge.jvm import maven
from heronbridge.jvm import storm as storm_jars
from heronbridge.jvm.maven import MIN_JAVA, Log

from .errors import StormError

__all__ = ["StormInstall", "fetch"]

PACKAGE = Path(__file__).resolve().parent.parent  # heronbridge.conformance
JAVA_SOURCES = PACKAGE / "java"


@dataclass(frozen=True)
class StormInstall:
    version: str
    classpath: list[Path]  # every jar a Storm run needs after the topology's own jar
    java: Path
    directory: Path  # <home>/storm/<version>
    extensions: Path  # our compiled Java classes (DirectShellBolt and friends), a jar


def fetch(home: Path | None = None, log: Log | None = None) -> StormInstall:
    """Storm's jars for local-mode runs (resolved with Maven on first use, then reused)
    and the suite's extensions compiled against them."""
    say = log or (lambda text: None)
    jars = storm_jars.fetch(home, say)
    with maven.locked(jars.directory / ".lock"):
        extensions = _extensions(jars.directory, jars.java, [*jars.jars, *jars.singles], say)
    return StormInstall(jars.version, [*jars.jars, *jars.singles, extensions], jars.java,
                        jars.directory, extensions)


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
