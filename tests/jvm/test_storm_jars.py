"""Storm's jars for Java components and `storm jar` (heronbridge.jvm.storm): the version
the pom pins, clear errors when Java or Maven is missing or Maven fails, and the fetch
verb reusing what was resolved."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from heronbridge.jvm import JvmError, maven
from heronbridge.jvm import storm as installs
from heronbridge.jvm.storm import fetch


def fake_java(folder: Path, version: str) -> Path:
    """A `java` that only answers -version, as a JDK of that version would."""
    folder.mkdir(parents=True, exist_ok=True)
    java = folder / "java"
    java.write_text(f"#!/bin/sh\necho 'openjdk version \"{version}\" 2025-04-15' >&2\n")
    java.chmod(0o755)
    return java


def only_on_path(monkeypatch, folder: Path) -> None:
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(folder))


@pytest.mark.integration
@pytest.mark.parametrize(("java", "said"), [
    (None, r"Java 17 or later: expected `java` on PATH"),
    ("1.8.0_402", r"Java 17 or later: .*1\.8\.0_402")], ids=["without-java", "java-too-old"])
def test_storm_needs_java_17(tmp_path, monkeypatch, java, said):
    if java is not None:
        fake_java(tmp_path / "bin", java)
    only_on_path(monkeypatch, tmp_path / "bin")
    with pytest.raises(JvmError, match=said):
        fetch(tmp_path / "home")


@pytest.mark.integration
def test_without_maven(tmp_path, monkeypatch):
    fake_java(tmp_path / "bin", "17.0.15")
    only_on_path(monkeypatch, tmp_path / "bin")
    with pytest.raises(JvmError, match=r"Apache Maven: expected `mvn` on PATH"):
        fetch(tmp_path / "home")
    assert not (tmp_path / "home" / "storm" / installs.storm_version() / "classpath.txt").exists()


@pytest.mark.integration
@pytest.mark.conformance
def test_a_maven_failure_says_what_ran_and_what_maven_said(tmp_path, monkeypatch):
    pom = tmp_path / "pom.xml"
    pom.write_text(installs.POM.read_text().replace(
        f"<storm.version>{installs.storm_version()}</storm.version>",
        "<storm.version>0.0.404</storm.version>"))
    monkeypatch.setattr(installs, "POM", pom)
    with pytest.raises(JvmError) as caught:
        fetch(tmp_path / "home")
    text = str(caught.value)
    assert "resolving Apache Storm 0.0.404 with Maven failed (exit code 1)" in text
    assert "dependency:build-classpath" in text
    assert "storm-server:jar:0.0.404" in text  # from Maven's own output


@pytest.mark.parametrize(("text", "major"), [
    ('openjdk version "17.0.15" 2025-04-15', 17),
    ('java version "1.8.0_402"', 8),
    ('openjdk version "21" 2023-09-19', 21),
    ("no version here", None),
])
def test_java_major(text, major):
    assert maven.java_major(text) == major


def test_the_version_is_the_poms_one_property(tmp_path):
    pom = tmp_path / "pom.xml"
    pom.write_text(installs.POM.read_text().replace(
        f"<storm.version>{installs.storm_version()}</storm.version>",
        "<storm.version>9.9.9</storm.version>"))
    assert installs.storm_version(pom) == "9.9.9"
    pom.write_text("<project xmlns='http://maven.apache.org/POM/4.0.0'></project>")
    with pytest.raises(JvmError, match="expected a storm.version property"):
        installs.storm_version(pom)


def test_the_pom_pins_what_the_run_needs():
    ns = {"m": "http://maven.apache.org/POM/4.0.0"}
    root = ET.parse(installs.POM).getroot()
    pinned = {a.findtext("m:artifactId", namespaces=ns): a.findtext("m:version", namespaces=ns)
              for a in [*root.iterfind(".//m:dependency", ns),
                        *root.iterfind(".//m:artifactItem", ns)]}
    assert pinned["storm-server"] == pinned["flux-core"] == "${storm.version}"
    # Maven cannot resolve flux-core (its parent pom is not published): one jar, fetched
    assert installs.single_jars() == [("org.apache.storm", "flux-core",
                                       installs.storm_version())]
    plugin = next(p for p in root.iterfind(".//m:plugin", ns)
                  if p.findtext("m:artifactId", namespaces=ns) == "maven-dependency-plugin")
    assert plugin.findtext("m:version", namespaces=ns).startswith("3.")


@pytest.mark.compat("cli/heronbridge storm", "cli/heronbridge storm fetch")
@pytest.mark.integration
@pytest.mark.conformance
def test_the_fetch_verb_reports_the_jars_it_reuses(storm_home):
    import subprocess

    from testkit import HERONBRIDGE

    jars = fetch(storm_home)
    stamp = (jars.directory / "mvn.log").stat().st_mtime_ns
    done = subprocess.run([HERONBRIDGE, "storm", "fetch", "--home", str(storm_home)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    said = f"Apache Storm {jars.version}: {len(jars.jars) + len(jars.singles)} jars, java"
    assert said in " ".join(done.stderr.split()), done.stderr
    assert (jars.directory / "mvn.log").stat().st_mtime_ns == stamp  # reused
