"""The conformance suite's Storm: the product's Storm jars (heronbridge.jvm.storm),
resolved with Maven once and reused afterwards, plus the suite's own Java extensions."""

from __future__ import annotations

import zipfile

import pytest

from heronbridge.conformance.storm import fetch
from heronbridge.jvm.storm import storm_version


@pytest.mark.integration
@pytest.mark.conformance
def test_fetch_resolves_once_then_reuses(tmp_path):
    said: list[str] = []
    first = fetch(tmp_path, log=said.append)
    version = storm_version()
    assert first.version == version
    assert first.directory == tmp_path / "storm" / version
    names = [p.name for p in first.classpath]
    for artifact in ("storm-server", "storm-client", "flux-core"):
        assert f"{artifact}-{version}.jar" in names, names
    assert all(p.is_file() for p in first.classpath)
    assert first.extensions == first.classpath[-1]
    with zipfile.ZipFile(first.extensions) as z:
        classes = set(z.namelist())
    for name in ("DirectShellBolt", "DirectShellSpout", "DirectEmitJsonSerializer"):
        assert f"heronbridge/storm/{name}.class" in classes
    assert first.java.is_file()
    assert any("Maven" in s for s in said)

    mvn_log = first.directory / "mvn.log"
    stamp = mvn_log.stat().st_mtime_ns
    again: list[str] = []
    second = fetch(tmp_path, log=again.append)
    assert second == first
    assert again == []  # nothing resolved, downloaded or compiled
    assert mvn_log.stat().st_mtime_ns == stamp
