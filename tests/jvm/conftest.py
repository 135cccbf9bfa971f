"""Java tasks on the runtime: the JVM task host's jar (the installed wheel's, or an editable
install's built on first use), Storm's jars as the suite resolves them, and the Java code
of the projects here compiled into a folder of jars once per session.

Every test here is one xdist group: they run one at a time on one worker (each task a
JVM: two tests' JVMs starting at once on two shared cores missed their start), beside
the conformance tests on the other."""

from __future__ import annotations

import subprocess
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
SOURCES = [ROOT / "examples" / "storm_topologies" / "javamix" / "src" / "jvm",
           Path(__file__).with_name("java")]
PROJECTS = Path(__file__).with_name("projects")


@pytest.hookimpl(tryfirst=True)  # before tests/conftest.py groups by module fixtures
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(item.path).resolve().parents:
            item.add_marker(pytest.mark.xdist_group("jvm"))


@pytest.fixture(scope="session")
def java_jars(storm_install, tmp_path_factory) -> Path:
    """A folder with one jar: javamix's classes and the tests' own (jvmtests.*)."""
    from heronbridge.jvm.host import host_jar

    host_jar()  # fail early, and clearly, when the host is not built
    out = tmp_path_factory.mktemp("java-jars")
    classes = out / "classes"
    sources = [str(p) for folder in SOURCES for p in sorted(folder.rglob("*.java"))]
    javac = storm_install.java.resolve().parent / "javac"
    subprocess.run([str(javac), "--release", "17", "-nowarn", "-d", str(classes), "-cp",
                    ":".join(map(str, storm_install.classpath)), *sources],
                   check=True, capture_output=True, text=True)
    jars = out / "jars"
    jars.mkdir()
    with zipfile.ZipFile(jars / "components.jar", "w") as z:
        for path in sorted(classes.rglob("*.class")):
            z.write(path, path.relative_to(classes).as_posix())
    return jars
