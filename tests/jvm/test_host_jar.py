"""The JVM task host's jar is found through the installed package: a wheel's beside
heronbridge.jvm; in an editable install, built from the checkout's jvm/ on first use with
a progress line, reused while its sources stay the same, built again when one changes.
Maven here is a script that does what `mvn package` does to the folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from heronbridge.jvm import JvmError, build, host

FAKE_MVN = """#!/bin/sh
echo "$@" >> "{calls}"
pom=""; previous=""
for arg in "$@"; do
    if [ "$previous" = "-f" ]; then pom="$arg"; fi
    previous="$arg"
done
if [ -n "{fail}" ]; then echo "[ERROR] {fail}"; exit 1; fi
mkdir -p "$(dirname "$pom")/target"
echo "a jar" > "$(dirname "$pom")/target/heronbridge-jvm-host.jar"
"""


def a_checkout(root: Path) -> Path:
    """The files a checkout's jar is built from."""
    for name, text in {"jvm/pom.xml": "<project/>",
                       "jvm/src/main/java/heronbridge/jvm/Task.java": "class Task {}",
                       "jvm/src/test/java/heronbridge/jvm/TaskTest.java": "class TaskTest {}",
                       "src/heronbridge/runtime/proto/control.proto": "syntax = \"proto3\";",
                       "src/heronbridge/runtime/wire/protocol_vectors.json": "{}"}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


@pytest.fixture
def maven(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A fake `mvn` first on PATH; returns the list of the argument lines it was run with."""
    folder, calls = tmp_path / "bin", tmp_path / "mvn-calls"
    folder.mkdir()

    def install(fail: str = "") -> Path:
        mvn = folder / "mvn"
        mvn.write_text(FAKE_MVN.format(calls=calls, fail=fail))
        mvn.chmod(0o755)
        return calls

    install()
    monkeypatch.setenv("PATH", f"{folder}:/usr/bin:/bin")
    monkeypatch.setattr(host, "PACKAGED", tmp_path / "not-installed" / build.JAR)

    def runs() -> list[str]:
        return calls.read_text().splitlines() if calls.exists() else []

    runs.install = install  # type: ignore[attr-defined]
    return runs


def test_a_wheel_s_jar_is_the_one_used(tmp_path, monkeypatch):
    jar = tmp_path / build.JAR
    jar.write_text("a jar")
    monkeypatch.setattr(host, "PACKAGED", jar)
    monkeypatch.setattr(build, "ensure", lambda *a, **k: pytest.fail("built a jar"))
    assert host.host_jar() == jar


def test_an_installed_package_without_the_jar_says_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setattr(host, "PACKAGED", tmp_path / "site-packages" / "heronbridge" / "jvm" /
                        build.JAR)
    monkeypatch.setattr(host, "PACKAGE", tmp_path / "site-packages" / "heronbridge")
    with pytest.raises(JvmError) as caught:
        host.host_jar()
    assert str(host.PACKAGED) in str(caught.value)
    assert "install a wheel built with Maven and Java 17" in str(caught.value)


def test_a_checkout_builds_on_first_use_then_reuses_until_a_source_changes(tmp_path, maven,
                                                                           monkeypatch):
    checkout = a_checkout(tmp_path / "checkout")
    monkeypatch.setattr(host, "PACKAGE", checkout / "src" / "heronbridge")
    said: list[str] = []
    jar = host.host_jar(said.append)
    assert jar == checkout / "jvm" / "target" / build.JAR and jar.is_file()
    [line] = said
    assert line.startswith("building the JVM task host with Maven (once for these sources")
    [run] = maven()
    assert f"-f {checkout / 'jvm' / 'pom.xml'} package -DskipTests" in run

    said.clear()
    assert host.host_jar(said.append) == jar
    assert said == [] and len(maven()) == 1  # reused

    (checkout / "jvm" / "src" / "main" / "java" / "heronbridge" / "jvm" / "Task.java").write_text(
        "class Task { int changed; }")
    assert host.host_jar(said.append) == jar
    assert len(said) == 1 and len(maven()) == 2  # built again


def test_a_wheel_build_reuses_only_a_jar_whose_tests_ran(tmp_path, maven):
    checkout = a_checkout(tmp_path / "checkout")
    build.ensure(checkout, tests=False, say=lambda line: None)
    build.ensure(checkout, tests=True, say=lambda line: None)
    first, second = maven()
    assert "-DskipTests" in first and "-DskipTests" not in second
    build.ensure(checkout, tests=True, say=lambda line: None)
    build.ensure(checkout, tests=False, say=lambda line: None)
    assert len(maven()) == 2  # a tested jar serves both


def test_without_maven_the_build_says_what_to_install(tmp_path, monkeypatch):
    checkout = a_checkout(tmp_path / "checkout")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(JvmError, match=r"needs Apache Maven and Java 17 or later: expected "
                                       r"`mvn` on PATH, found none"):
        build.ensure(checkout, tests=False, say=lambda line: None)


def test_a_failed_build_shows_maven_s_last_lines(tmp_path, maven):
    checkout = a_checkout(tmp_path / "checkout")
    maven.install(fail="COMPILATION ERROR: Task.java:[3,1] class, interface expected")
    with pytest.raises(JvmError) as caught:
        build.ensure(checkout, tests=False, say=lambda line: None)
    text = str(caught.value)
    assert text.startswith("building the JVM task host failed (exit code 1): ran ")
    assert "[ERROR] COMPILATION ERROR: Task.java:[3,1]" in text
    assert build.built(checkout) is None  # nothing stamped
